#include "devlink_standin.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "devlink_wire.h"

namespace rdmasim {
namespace {

namespace wire = devlink_wire;

// A request datagram is a few dozen bytes; netlink itself takes up to the socket's buffer.
constexpr size_t kMaxDatagram = 64 * 1024;
constexpr size_t kMaxConnections = 256;

}  // namespace

DevlinkStandIn::DevlinkStandIn(EventLoop& loop, std::string path, const DevlinkHealth& health,
                               bool pad_u64)
    : loop_(loop), path_(std::move(path)), health_(health), pad_u64_(pad_u64) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path)
    throw std::runtime_error("fabric directory path too long for a unix socket: " + path_);
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  unlink(path_.c_str());
  listen_fd_.reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_fd_) throw std::system_error(errno, std::generic_category(), "socket");
  if (bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::system_error(errno, std::generic_category(), "cannot bind " + path_);
  chmod(path_.c_str(), 0666);  // any user may open a generic netlink socket
  if (listen(listen_fd_.get(), 64) != 0)
    throw std::system_error(errno, std::generic_category(), "listen");
  listen_watch_ =
      IoWatch(&loop_, listen_fd_.get(), EPOLLIN, [this](uint32_t) { accept_connections(); });
}

DevlinkStandIn::~DevlinkStandIn() {
  unlink(path_.c_str());
}

std::vector<uint32_t> DevlinkStandIn::used_port_ids() const {
  std::vector<uint32_t> out;
  for (const auto& [id, c] : connections_)
    out.push_back(c->port_id);
  return out;
}

// netlink_autobind(): the process's pid for its first socket, then numbers from -4096 down.
uint32_t DevlinkStandIn::port_id_for(int fd) {
  const std::vector<uint32_t> used = used_port_ids();
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0 &&
      std::find(used.begin(), used.end(), static_cast<uint32_t>(cred.pid)) == used.end())
    return static_cast<uint32_t>(cred.pid);
  while (std::find(used.begin(), used.end(), next_port_id_) != used.end())
    --next_port_id_;
  return next_port_id_--;
}

void DevlinkStandIn::accept_connections() {
  while (true) {
    const int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (connections_.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    const uint64_t id = next_id_++;
    auto c = std::make_unique<Connection>();
    c->fd.reset(fd);
    c->port_id = port_id_for(fd);
    c->watch = IoWatch(&loop_, fd, EPOLLIN | EPOLLRDHUP,
                       [this, id](uint32_t events) { on_event(id, events); });
    connections_.emplace(id, std::move(c));
    ++stats_.connections;
  }
}

void DevlinkStandIn::on_event(uint64_t id, uint32_t events) {
  auto it = connections_.find(id);
  if (it == connections_.end() || it->second->closed) return;
  Connection& c = *it->second;
  if (events & EPOLLOUT) flush(c);
  std::vector<uint8_t> buf(kMaxDatagram);
  while (!c.closed) {
    const ssize_t n = recv(c.fd.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {  // the program closed its socket, or it broke
      c.closed = true;
      c.watch = IoWatch();
      break;
    }
    on_datagram(c, std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
  }
}

void DevlinkStandIn::on_datagram(Connection& c, std::span<const uint8_t> datagram) {
  // netlink_rcv_skb: every message of the datagram in turn; a length that does not fit ends it.
  size_t at = 0;
  wire::Header h;
  while (wire::read_header(datagram, at, &h)) {
    ++stats_.requests;
    on_message(c, datagram.subspan(at, h.len));
    at += (h.len + 3) & ~size_t{3};
  }
}

void DevlinkStandIn::on_message(Connection& c, std::span<const uint8_t> message) {
  wire::Header h;
  wire::read_header(message, 0, &h);
  // Only requests are taken; control messages (NOOP, DONE, ERROR...) are ignored.
  if (!(h.flags & NLM_F_REQUEST) || h.type < NLMSG_MIN_TYPE) return;
  std::vector<uint8_t> out;
  int error = 0;
  const bool want_ack = h.flags & NLM_F_ACK;
  if (message.size() < sizeof(nlmsghdr) + GENL_HDRLEN) {
    error = EINVAL;
  } else if (h.type == GENL_ID_CTRL) {
    const uint8_t cmd = wire::genl_command(message);
    if (cmd != CTRL_CMD_GETFAMILY) {
      error = EOPNOTSUPP;
    } else if (h.flags & NLM_F_DUMP) {
      // ctrl_dumpfamily: every family; the stand-in's kernel has only devlink to show (the
      // controller's own entry is left out).
      wire::put_family(out, c.port_id, h.seq, NLM_F_MULTI);
      queue(c, std::move(out));
      out.clear();
      wire::put_done(out, c.port_id, h.seq);
      queue(c, std::move(out));
      return;
    } else {
      uint16_t id = 0;
      const bool by_id = wire::u16_attr(message, CTRL_ATTR_FAMILY_ID, &id);
      const std::string name = wire::string_attr(message, CTRL_ATTR_FAMILY_NAME);
      // ctrl_getfamily: the name wins over the id; neither is EINVAL, an unknown one ENOENT.
      const bool found = !name.empty() ? name == DEVLINK_GENL_NAME : id == wire::kFamilyId;
      if (name.empty() && !by_id)
        error = EINVAL;
      else if (!found)
        error = ENOENT;
      else
        wire::put_family(out, c.port_id, h.seq, 0);
    }
  } else if (h.type == wire::kFamilyId) {
    if (wire::genl_command(message) == DEVLINK_CMD_HEALTH_REPORTER_GET &&
        (h.flags & NLM_F_DUMP) == NLM_F_DUMP) {
      dump(c, h.seq);
      return;  // a dump is never acknowledged
    }
    error = EOPNOTSUPP;
  } else {
    error = ENOENT;  // genl_rcv_msg: no such family
  }
  if (error || want_ack) wire::put_error(out, c.port_id, message, error);
  if (!out.empty()) queue(c, std::move(out));
}

void DevlinkStandIn::dump(Connection& c, uint32_t seq) {
  ++stats_.dumps;
  // netlink_dump: each part as full as it gets, then NLMSG_DONE on its own (the last call of
  // the dump function finds nothing more), or in the first part when there is nothing at all.
  std::vector<uint8_t> part;
  size_t limit = wire::kFirstDumpPart;
  for (const DevlinkFill& f : health_.dump()) {
    std::vector<uint8_t> msg;
    wire::put_reporter(msg, f, DEVLINK_CMD_HEALTH_REPORTER_GET, c.port_id, seq, NLM_F_MULTI,
                       pad_u64_);
    if (!part.empty() && part.size() + msg.size() > limit) {
      queue(c, std::move(part));
      part.clear();
      limit = wire::kDumpPart;
    }
    part.insert(part.end(), msg.begin(), msg.end());
  }
  if (!part.empty()) queue(c, std::move(part));
  std::vector<uint8_t> done;
  wire::put_done(done, c.port_id, seq);
  queue(c, std::move(done));
}

void DevlinkStandIn::notify(const DevlinkFill& f) {
  ++stats_.notifications;
  for (auto& [id, c] : connections_) {
    if (c->closed) continue;
    // devlink_recover_notify: a multicast, port id 0 and seq 0.
    std::vector<uint8_t> msg;
    wire::put_reporter(msg, f, DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, pad_u64_);
    queue(*c, std::move(msg));
  }
}

void DevlinkStandIn::queue(Connection& c, std::vector<uint8_t> datagram) {
  c.out.push_back(std::move(datagram));
  flush(c);
}

void DevlinkStandIn::flush(Connection& c) {
  while (!c.out.empty() && !c.closed) {
    const std::vector<uint8_t>& d = c.out.front();
    const ssize_t n = send(c.fd.get(), d.data(), d.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      c.watch.set_events(EPOLLIN | EPOLLRDHUP | EPOLLOUT);
      return;
    }
    if (n < 0) {  // the reader is gone: EPIPE, ECONNRESET
      c.closed = true;
      c.watch = IoWatch();
      c.out.clear();
      return;
    }
    c.out.pop_front();
  }
  if (!c.closed) c.watch.set_events(EPOLLIN | EPOLLRDHUP);
}

size_t DevlinkStandIn::close_all() {
  size_t n = 0;
  for (auto& [id, c] : connections_) {
    if (c->closed) continue;
    c->closed = true;
    c->watch = IoWatch();
    c->out.clear();
    c->fd.reset();
    ++n;
  }
  return n;
}

void DevlinkStandIn::reap() {
  std::erase_if(connections_, [](const auto& entry) { return entry.second->closed; });
}

}  // namespace rdmasim
