#include "devx_channels.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/devx.h"
#include "devx_names.h"

namespace rdmasim {

using nlohmann::json;

struct ChannelRegistry::Channel {
  uint64_t id = 0;
  uint32_t slot = 0;
  Owner owner;
  bool omit_data = false;
  bool destroyed = false;
  bool is_closed = false;
  bool dirty = false;
  UniqueFd sock;  // the simulator's end
  IoWatch watch;
  std::deque<Record> backlog;  // queued, not yet in the socket
  std::vector<Subscription> subs;
  uint64_t queued = 0;  // records queued: their sequence numbers are 1..queued
  uint64_t sent = 0;    // records written to the socket
  uint64_t merged = 0;
  uint64_t dropped = 0;
  uint64_t signaled = 0;
  uint64_t fail_next = 0;  // injected allocation failures still to come
};

namespace {

// Up to 64 MiB of records in the socket (a record costs 768 bytes of socket memory): as root,
// SO_SNDBUFFORCE passes the system's limit; otherwise the limit (net.core.wmem_max) applies. The
// backlog holds the rest, so this only saves wakeups during storms.
constexpr int kSocketBuffer = 64 << 20;

}  // namespace

ChannelRegistry::ChannelRegistry(EventLoop& loop, ShmFabric& shm)
    : loop_(loop), shm_(shm), slot_busy_(kMaxChannels, false), sndbuf_(kSocketBuffer) {}

ChannelRegistry::~ChannelRegistry() = default;

ChannelRegistry::Channel* ChannelRegistry::find(uint64_t id) const {
  auto it = channels_.find(id);
  return it == channels_.end() ? nullptr : it->second.get();
}

int ChannelRegistry::create(const Owner& owner, bool omit_data, uint64_t* id, uint32_t* slot,
                            UniqueFd* client) {
  auto free_slot = std::find(slot_busy_.begin(), slot_busy_.end(), false);
  if (free_slot == slot_busy_.end()) return EMFILE;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return errno;
  UniqueFd mine(sv[0]);
  client->reset(sv[1]);
  // Non-blocking on the simulator's side only: the client's end is its own open file.
  fcntl(mine.get(), F_SETFL, O_NONBLOCK);
  if (setsockopt(mine.get(), SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf_, sizeof sndbuf_) != 0)
    setsockopt(mine.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf_, sizeof sndbuf_);

  auto c = std::make_unique<Channel>();
  c->id = next_id_++;
  c->slot = static_cast<uint32_t>(free_slot - slot_busy_.begin());
  c->owner = owner;
  c->omit_data = omit_data;
  c->sock = std::move(mine);
  *free_slot = true;
  ShmChannel& rec = shm_.channels[c->slot];
  store_relaxed(rec.id, uint64_t{0});
  store_relaxed(rec.overflow, 0u);
  store_relaxed(rec.destroyed, 0u);
  store_relaxed(rec.read, uint64_t{0});
  store_release(rec.id, c->id);
  Channel* raw = c.get();
  // Only the client closing its end (HUP) and room to write (OUT, when a backlog waits) matter.
  c->watch = IoWatch(&loop_, raw->sock.get(), 0, [this, raw](uint32_t ev) {
    if (raw->is_closed) return;
    if (ev & (EPOLLHUP | EPOLLERR))
      closed(*raw);
    else if (ev & EPOLLOUT)
      flush_one(*raw);
  });
  *id = c->id;
  *slot = c->slot;
  live_[owner.device_index].push_back(raw);
  channels_.emplace(c->id, std::move(c));
  ++created_total_;
  return 0;
}

bool ChannelRegistry::owns(uint64_t context_id, uint64_t channel_id) const {
  const Channel* c = find(channel_id);
  return c && !c->is_closed && c->owner.context_id == context_id;
}

int ChannelRegistry::subscribe(uint64_t channel_id, const std::vector<uint16_t>& events,
                               uint64_t cookie) {
  Channel* c = find(channel_id);
  if (!c || c->destroyed) return EBADF;
  if (c->subs.size() + events.size() > kMaxSubscriptions) return ENOMEM;
  for (uint16_t e : events)
    c->subs.push_back(Subscription{e, cookie, UniqueFd(), 0});
  return 0;
}

int ChannelRegistry::subscribe_fd(uint64_t channel_id, uint16_t event, UniqueFd eventfd) {
  Channel* c = find(channel_id);
  if (!c || c->destroyed) return EBADF;
  if (c->subs.size() + 1 > kMaxSubscriptions) return ENOMEM;
  c->subs.push_back(Subscription{event, 0, std::move(eventfd), 0});
  return 0;
}

void ChannelRegistry::destroy(Channel& c) {
  if (c.destroyed || c.is_closed) return;
  c.destroyed = true;
  // The bit first: a reader woken by the shutdown below must find it.
  store_release(shm_.channels[c.slot].destroyed, 1u);
  c.backlog.clear();
  c.subs.clear();
  shutdown(c.sock.get(), SHUT_WR);
  c.watch.set_events(0);
  std::vector<Channel*>& same = live_[c.owner.device_index];
  same.erase(std::remove(same.begin(), same.end(), &c), same.end());
  if (same.empty()) live_.erase(c.owner.device_index);
}

void ChannelRegistry::destroy_context(uint64_t context_id) {
  for (auto& [id, c] : channels_)
    if (c->owner.context_id == context_id) destroy(*c);
}

void ChannelRegistry::destroy_device(int32_t device_index) {
  for (auto& [id, c] : channels_)
    if (c->owner.device_index == device_index) destroy(*c);
}

std::vector<uint64_t> ChannelRegistry::destroy_channels(int32_t device_index,
                                                        std::optional<uint64_t> channel_id) {
  std::vector<uint64_t> ids;
  for (auto& [id, c] : channels_)
    if (c->owner.device_index == device_index && !c->destroyed && !c->is_closed &&
        (!channel_id || *channel_id == id)) {
      destroy(*c);
      ids.push_back(id);
    }
  return ids;
}

void ChannelRegistry::closed(Channel& c) {
  destroy(c);
  c.is_closed = true;
  c.watch = IoWatch();
  json h = channel_json(c);
  closed_counts_.queued += c.queued;
  closed_counts_.merged += c.merged;
  closed_counts_.dropped += c.dropped;
  closed_read_ += h["read"].get<uint64_t>();
  history_.push_back(std::move(h));
  if (history_.size() > 1000) history_.erase(history_.begin());
  store_release(shm_.channels[c.slot].id, uint64_t{0});
  slot_busy_[c.slot] = false;
  ++closed_total_;
  auto it = channels_.find(c.id);
  if (it != channels_.end()) {
    closing_.push_back(std::move(it->second));
    channels_.erase(it);
  }
}

void ChannelRegistry::reap() {
  if (closing_.empty()) return;
  dirty_.erase(
      std::remove_if(dirty_.begin(), dirty_.end(), [](Channel* c) { return c->is_closed; }),
      dirty_.end());
  closing_.clear();
}

bool ChannelRegistry::omit_pending(const Channel& c, const Subscription& s) const {
  if (s.pending_seq == 0) return false;
  // Entries are taken in queue order; the stand-in counts each one before it takes it.
  if (s.pending_seq <= load_acquire(shm_.channels[c.slot].read)) return false;
  // A program that read() the fd itself is not counted: an empty socket with nothing left to
  // write means it took everything.
  int outq = 0;
  return !(c.backlog.empty() && ioctl(c.sock.get(), SIOCOUTQ, &outq) == 0 && outq == 0);
}

void ChannelRegistry::queue(Channel& c, Subscription& s, const devx::Eqe& eqe, DevxCounts& counts) {
  if (c.omit_data) {
    // The kernel links the subscription itself onto the channel's list: at most one entry each.
    if (omit_pending(c, s)) {
      ++c.merged;
      ++counts.merged;
      return;
    }
    c.backlog.push_back(Record{s.cookie, {}});
    s.pending_seq = ++c.queued;
  } else {
    // deliver_event(): kzalloc(GFP_ATOMIC) failed; the event is lost and the reader is told.
    if (c.fail_next > 0) {
      --c.fail_next;
      ++c.dropped;
      ++counts.dropped;
      store_release(shm_.channels[c.slot].overflow, 1u);
      return;
    }
    c.backlog.push_back(Record{s.cookie, eqe.bytes});
    ++c.queued;
  }
  ++counts.queued;
  if (!c.dirty) {
    c.dirty = true;
    dirty_.push_back(&c);
  }
}

DevxCounts ChannelRegistry::deliver(int32_t device_index, const devx::Eqe& eqe) {
  DevxCounts counts;
  const uint8_t type = eqe.type();
  // devx_event_notifier() passes on neither: "kernel events which may occur frequently".
  if (type == devx::kEventCmd || type == devx::kEventPageRequest) return counts;
  auto it = live_.find(device_index);
  if (it == live_.end()) return counts;
  for (Channel* c : it->second) {
    bool reached = false;
    for (Subscription& s : c->subs) {
      if (s.event != type) continue;
      reached = true;
      if (s.eventfd) {
        const uint64_t one = 1;
        if (write(s.eventfd.get(), &one, sizeof one) == sizeof one) {
          ++c->signaled;
          ++counts.signaled;
        }
        continue;
      }
      queue(*c, s, eqe, counts);
    }
    counts.channels += reached;
  }
  return counts;
}

std::vector<uint64_t> ChannelRegistry::fail_allocations(int32_t device_index,
                                                        std::optional<uint64_t> channel_id,
                                                        uint64_t count) {
  std::vector<uint64_t> armed;
  auto it = live_.find(device_index);
  if (it == live_.end()) return armed;
  for (Channel* c : it->second)
    if (!c->omit_data && (!channel_id || *channel_id == c->id)) {
      c->fail_next += count;
      armed.push_back(c->id);
    }
  return armed;
}

void ChannelRegistry::flush_one(Channel& c) {
  constexpr size_t kBatch = 256;
  const size_t size = c.omit_data ? devx::kOmitRecordSize : devx::kRecordSize;
  while (!c.backlog.empty() && !c.is_closed) {
    mmsghdr msgs[kBatch] = {};
    iovec iov[kBatch];
    const size_t n = std::min(kBatch, c.backlog.size());
    for (size_t i = 0; i < n; ++i) {
      iov[i] = iovec{&c.backlog[i], size};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int sent = sendmmsg(c.sock.get(), msgs, static_cast<unsigned>(n), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) closed(c);  // EPIPE, ECONNRESET: the client closed its end
      break;
    }
    c.backlog.erase(c.backlog.begin(), c.backlog.begin() + sent);
    c.sent += static_cast<uint64_t>(sent);
  }
  if (!c.is_closed) c.watch.set_events(c.backlog.empty() ? 0u : uint32_t{EPOLLOUT});
}

void ChannelRegistry::flush() {
  std::vector<Channel*> dirty;
  dirty.swap(dirty_);
  for (Channel* c : dirty) {
    c->dirty = false;
    if (!c->is_closed && !c->destroyed) flush_one(*c);
  }
}

size_t ChannelRegistry::open_count(int32_t device_index) const {
  auto it = live_.find(device_index);
  return it == live_.end() ? 0 : it->second.size();
}

json ChannelRegistry::channel_json(const Channel& c) const {
  json subs = json::array();
  for (const Subscription& s : c.subs) {
    json j = {{"event", s.event}, {"cookie", s.cookie}, {"eventfd", static_cast<bool>(s.eventfd)}};
    if (const char* name = devx::name_of(devx::event_types(), s.event)) j["event_name"] = name;
    subs.push_back(j);
  }
  return {{"id", c.id},
          {"context", c.owner.context_id},
          {"pid", c.owner.pid},
          {"device", c.owner.device_name},
          {"device_index", c.owner.device_index},
          {"omit_data", c.omit_data},
          {"state", c.is_closed   ? "closed"
                    : c.destroyed ? "destroyed"
                                  : "open"},
          {"subscriptions", subs},
          {"queued", c.queued},
          {"read", load_relaxed(shm_.channels[c.slot].read)},
          {"merged", c.merged},
          {"dropped", c.dropped},
          {"signaled", c.signaled},
          {"backlog", c.backlog.size()},
          {"fail_next", c.fail_next}};
}

json ChannelRegistry::stats() const {
  json list = history_;
  uint64_t queued = closed_counts_.queued, read_n = closed_read_, merged = closed_counts_.merged,
           dropped = closed_counts_.dropped;
  for (const auto& [id, c] : channels_) {
    json j = channel_json(*c);
    queued += c->queued;
    read_n += j["read"].get<uint64_t>();
    merged += c->merged;
    dropped += c->dropped;
    list.push_back(std::move(j));
  }
  return {{"channels", list},
          {"totals",
           {{"channels_created", created_total_},
            {"channels_closed", closed_total_},
            {"channels_open", channels_.size()},
            {"records_queued", queued},
            {"records_read", read_n},
            {"merged", merged},
            {"dropped", dropped}}}};
}

}  // namespace rdmasim
