#include "contexts.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/protocol.h"
#include "rdma_eventd/internal/fd_message.h"

namespace rdmasim {

using nlohmann::json;

struct ContextRegistry::Context {
  uint64_t id = 0;
  uint32_t slot = 0;
  int pid = 0;
  int32_t device_index = -1;
  std::string device_name;
  uint32_t devx_uid = 0;
  UniqueFd conn;
  UniqueFd pipe;
  IoWatch conn_watch;
  IoWatch pipe_watch;
  ByteQueue backlog;
  uint64_t queued = 0;
  bool silenced = false;       // disassociated: nothing more is queued
  bool reader_closed = false;  // the process closed its async fd: nothing can be written
  bool dirty = false;
  bool is_closed = false;
  std::string request;  // a DEVX command line not yet complete
};

namespace {

int max_pipe_size() {
  std::ifstream in("/proc/sys/fs/pipe-max-size");
  int size = 0;
  return in >> size && size > 0 ? size : 0;
}

bool send_reply(int fd, const std::string& line, int pass_fd) {
  rdma_eventd::internal::FdMessage msg(const_cast<char*>(line.data()), line.size());
  msg.attach(pass_fd);
  ssize_t n;
  do {
    n = sendmsg(fd, msg.get(), MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(line.size());
}

}  // namespace

ContextRegistry::ContextRegistry(EventLoop& loop, ShmFabric& shm,
                                 std::function<void(uint64_t, int32_t)> on_closed,
                                 ContextRequestHandler on_request)
    : loop_(loop),
      shm_(shm),
      on_closed_(std::move(on_closed)),
      on_request_(std::move(on_request)),
      slot_busy_(kMaxContexts, false),
      pipe_size_(max_pipe_size()) {}

ContextRegistry::~ContextRegistry() = default;

void ContextRegistry::refuse(UniqueFd conn, int err) {
  send_reply(conn.get(), "ERR " + std::to_string(err) + "\n", -1);
}

uint32_t ContextRegistry::take_slot(uint64_t id) {
  for (uint32_t i = 0; i < static_cast<uint32_t>(kMaxContexts); ++i) {
    const uint32_t slot = static_cast<uint32_t>((id + i) % kMaxContexts);
    if (!slot_busy_[slot]) {
      slot_busy_[slot] = true;
      return slot;
    }
  }
  return UINT32_MAX;
}

uint64_t ContextRegistry::open(UniqueFd conn, int32_t device_index, const std::string& device_name,
                               int pid, uint32_t devx_uid) {
  const uint64_t id = next_id_;
  const uint32_t slot = take_slot(id);
  if (slot == UINT32_MAX) {
    refuse(std::move(conn), EMFILE);
    return 0;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    slot_busy_[slot] = false;
    refuse(std::move(conn), errno);
    return 0;
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // The reader gets an ordinary blocking fd (O_NONBLOCK is per open file description: only the
  // simulator's end keeps it). A bigger pipe means fewer wakeups during storms; the backlog makes
  // the size irrelevant to correctness.
  fcntl(read_end.get(), F_SETFL, 0);
  if (pipe_size_ > 0) fcntl(write_end.get(), F_SETPIPE_SZ, pipe_size_);

  ShmContext& rec = shm_.contexts[slot];
  store_relaxed(rec.id, uint64_t{0});
  rec.pid = pid;
  rec.device_index = device_index;
  store_relaxed(rec.queued, uint64_t{0});
  store_relaxed(rec.read, uint64_t{0});
  store_relaxed(rec.acked, uint64_t{0});
  store_relaxed(rec.port_queries, uint64_t{0});
  store_relaxed(rec.gid_queries, uint64_t{0});
  store_relaxed(rec.pkey_queries, uint64_t{0});
  store_release(rec.id, id);

  if (!send_reply(conn.get(),
                  "OK " + std::to_string(id) + " " + std::to_string(slot) + " " +
                      std::to_string(devx_uid) + "\n",
                  read_end.get())) {
    store_release(rec.id, uint64_t{0});
    slot_busy_[slot] = false;
    return 0;
  }
  ++next_id_;
  ++opened_total_;
  auto c = std::make_unique<Context>();
  Context* raw = c.get();
  c->id = id;
  c->slot = slot;
  c->pid = pid;
  c->device_index = device_index;
  c->device_name = device_name;
  c->devx_uid = devx_uid;
  c->conn = std::move(conn);
  c->pipe = std::move(write_end);
  // The context lives as long as its connection, which also carries its DEVX commands.
  c->conn_watch = IoWatch(&loop_, c->conn.get(), EPOLLIN | EPOLLRDHUP,
                          [this, raw](uint32_t ev) { on_readable(raw, ev); });
  by_device_[device_index].push_back(raw);
  open_.emplace(id, std::move(c));
  return id;
}

void ContextRegistry::on_readable(Context* c, uint32_t events) {
  // Commands come one at a time (the stand-in waits for each reply), each with at most one fd.
  while (!c->is_closed) {
    char buf[kMaxContextRequest];
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(c->conn.get(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && !(events & (EPOLLHUP | EPOLLRDHUP))) return;
    if (n <= 0) {
      closed(c);
      return;
    }
    UniqueFd passed;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
        if (!passed)
          passed.reset(fd);
        else
          close(fd);
      }
    }
    c->request.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = c->request.find('\n')) != std::string::npos) {
      const std::string line = c->request.substr(0, nl);
      c->request.erase(0, nl + 1);
      ContextReply reply = on_request_(
          ContextView{c->id, c->pid, c->device_index, c->device_name, c->devx_uid, c->silenced},
          line, std::move(passed));
      send_reply(c->conn.get(), reply.line + "\n", reply.fd ? reply.fd.get() : -1);
    }
    if (c->request.size() > kMaxContextRequest) {  // not the stand-in talking
      closed(c);
      return;
    }
  }
}

void ContextRegistry::closed(Context* c) {
  c->is_closed = true;
  c->conn_watch = IoWatch();
  c->pipe_watch = IoWatch();
  const ShmContext& rec = shm_.contexts[c->slot];
  json h = context_json(*c);
  queued_total_closed_ += c->queued;
  read_total_closed_ += load_relaxed(rec.read);
  acked_total_closed_ += load_relaxed(rec.acked);
  history_.push_back(std::move(h));
  if (history_.size() > 10000) history_.erase(history_.begin());
  slot_busy_[c->slot] = false;
  ++closed_total_;
  std::vector<Context*>& same = by_device_[c->device_index];
  same.erase(std::remove(same.begin(), same.end(), c), same.end());
  if (same.empty()) by_device_.erase(c->device_index);
  auto it = open_.find(c->id);
  if (it != open_.end()) {
    closing_.push_back(std::move(it->second));
    open_.erase(it);
  }
}

void ContextRegistry::reap() {
  if (closing_.empty()) return;
  std::vector<std::pair<uint64_t, int32_t>> gone;
  for (const auto& c : closing_)
    gone.emplace_back(c->id, c->device_index);
  dirty_.erase(
      std::remove_if(dirty_.begin(), dirty_.end(), [](Context* c) { return c->is_closed; }),
      dirty_.end());
  closing_.clear();
  for (const auto& [id, device] : gone)
    on_closed_(id, device);
}

size_t ContextRegistry::deliver(int32_t device_index, uint32_t type, uint64_t element) {
  auto it = by_device_.find(device_index);
  if (it == by_device_.end()) return 0;
  const AsyncEventDesc ev{element, type, 0};
  size_t n = 0;
  for (Context* c : it->second) {
    if (c->silenced) continue;
    queue(c, ev);
    ++n;
  }
  return n;
}

bool ContextRegistry::deliver_to(uint64_t context_id, int32_t device_index, uint32_t type,
                                 uint64_t element) {
  auto it = open_.find(context_id);
  if (it == open_.end() || it->second->device_index != device_index || it->second->silenced)
    return false;
  queue(it->second.get(), AsyncEventDesc{element, type, 0});
  return true;
}

void ContextRegistry::queue(Context* c, const AsyncEventDesc& ev) {
  if (!c->reader_closed) c->backlog.append(&ev, sizeof ev);
  ++c->queued;
  store_relaxed(shm_.contexts[c->slot].queued, c->queued);
  if (!c->dirty) {
    c->dirty = true;
    dirty_.push_back(c);
  }
}

void ContextRegistry::silence(int32_t device_index) {
  auto it = by_device_.find(device_index);
  if (it != by_device_.end())
    for (Context* c : it->second)
      c->silenced = true;
}

void ContextRegistry::flush() {
  std::vector<Context*> still_dirty;
  for (Context* c : dirty_) {
    c->dirty = false;
    if (c->is_closed || c->reader_closed) {
      c->backlog.clear();
      continue;
    }
    while (!c->backlog.empty()) {
      iovec iov[16];
      // Whole records only: pipe writes of multiples of 16 bytes are split, if at all, at page
      // boundaries, so a reader never sees a partial record.
      const int n = c->backlog.front_iov(iov, 16, 16 * ByteQueue::kBlockSize);
      const ssize_t w = writev(c->pipe.get(), iov, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EPIPE) {  // the process closed its async fd; the context stays open
          c->reader_closed = true;
          c->backlog.clear();
        }
        break;
      }
      c->backlog.consume(static_cast<size_t>(w));
    }
    if (!c->backlog.empty() && !c->reader_closed) {
      c->dirty = true;
      still_dirty.push_back(c);
      if (!c->pipe_watch) {
        Context* raw = c;
        c->pipe_watch = IoWatch(&loop_, c->pipe.get(), EPOLLOUT, [this, raw](uint32_t) {
          if (!raw->dirty) {
            raw->dirty = true;
            dirty_.push_back(raw);
          }
          flush();
        });
      }
    } else {
      c->pipe_watch = IoWatch();
    }
  }
  dirty_ = std::move(still_dirty);
}

size_t ContextRegistry::open_count(int32_t device_index) const {
  size_t n = 0;
  for (const auto& [id, c] : open_)
    n += c->device_index == device_index;
  return n;
}

size_t ContextRegistry::open_count() const {
  return open_.size();
}

size_t ContextRegistry::devx_count(int32_t device_index) const {
  size_t n = 0;
  for (const auto& [id, c] : open_)
    n += c->device_index == device_index && c->devx_uid != 0;
  return n;
}

std::vector<int> ContextRegistry::open_pids(int32_t device_index) const {
  std::vector<int> pids;
  for (const auto& [id, c] : open_)
    if (c->device_index == device_index) pids.push_back(c->pid);
  return pids;
}

// One context's line of `rdma-sim stats`, open or closed.
json ContextRegistry::context_json(const Context& c) const {
  const ShmContext& rec = shm_.contexts[c.slot];
  return {{"id", c.id},
          {"pid", c.pid},
          {"device", c.device_name},
          {"device_index", c.device_index},
          {"open", !c.is_closed},
          {"queued", c.queued},
          {"read", load_relaxed(rec.read)},
          {"acked", load_relaxed(rec.acked)},
          {"port_queries", load_relaxed(rec.port_queries)},
          {"gid_queries", load_relaxed(rec.gid_queries)},
          {"pkey_queries", load_relaxed(rec.pkey_queries)},
          {"backlog", c.backlog.size() / sizeof(AsyncEventDesc)},
          {"silenced", c.silenced},
          {"reader_closed", c.reader_closed},
          {"devx", c.devx_uid != 0}};
}

json ContextRegistry::stats() const {
  json contexts = json::array();
  for (const json& h : history_)
    contexts.push_back(h);
  uint64_t queued = queued_total_closed_, read_n = read_total_closed_, acked = acked_total_closed_;
  for (const auto& [id, c] : open_) {
    const ShmContext& rec = shm_.contexts[c->slot];
    const uint64_t r = load_relaxed(rec.read), a = load_relaxed(rec.acked);
    contexts.push_back(context_json(*c));
    queued += c->queued;
    read_n += r;
    acked += a;
  }
  std::sort(contexts.begin(), contexts.end(), [](const json& a, const json& b) {
    return a["id"].get<uint64_t>() < b["id"].get<uint64_t>();
  });
  return {{"totals",
           {{"contexts_opened", opened_total_},
            {"contexts_closed", closed_total_},
            {"contexts_open", open_.size()},
            {"events_queued", queued},
            {"events_read", read_n},
            {"events_acked", acked}}},
          {"contexts", contexts}};
}

}  // namespace rdmasim
