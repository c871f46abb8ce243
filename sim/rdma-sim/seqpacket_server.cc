#include "seqpacket_server.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace rdmasim {
namespace {

// A request datagram is a few dozen bytes; netlink itself takes up to the socket's buffer.
constexpr size_t kMaxDatagram = 64 * 1024;
constexpr size_t kMaxConnections = 256;

}  // namespace

SeqpacketServer::SeqpacketServer(EventLoop& loop, std::string path, OnDatagram on_datagram)
    : loop_(loop), path_(std::move(path)), on_datagram_(std::move(on_datagram)) {
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
  chmod(path_.c_str(), 0666);  // any user may open a netlink socket
  if (listen(listen_fd_.get(), 64) != 0)
    throw std::system_error(errno, std::generic_category(), "listen");
  listen_watch_ =
      IoWatch(&loop_, listen_fd_.get(), EPOLLIN, [this](uint32_t) { accept_connections(); });
}

SeqpacketServer::~SeqpacketServer() {
  unlink(path_.c_str());
}

// netlink_autobind(): the process's pid for its first socket, then numbers from -4096 down.
uint32_t SeqpacketServer::port_id_for(int fd) {
  std::vector<uint32_t> used;
  for (const auto& [id, c] : connections_)
    used.push_back(c->peer.port_id);
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0 &&
      std::find(used.begin(), used.end(), static_cast<uint32_t>(cred.pid)) == used.end())
    return static_cast<uint32_t>(cred.pid);
  while (std::find(used.begin(), used.end(), next_port_id_) != used.end())
    --next_port_id_;
  return next_port_id_--;
}

void SeqpacketServer::accept_connections() {
  while (true) {
    const int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (connections_.size() >= kMaxConnections) {
      ::close(fd);
      continue;
    }
    const uint64_t id = next_id_++;
    auto c = std::make_unique<Connection>();
    c->fd.reset(fd);
    c->peer = Peer{id, port_id_for(fd)};
    c->watch = IoWatch(&loop_, fd, EPOLLIN | EPOLLRDHUP,
                       [this, id](uint32_t events) { on_event(id, events); });
    connections_.emplace(id, std::move(c));
    ++accepted_;
  }
}

void SeqpacketServer::on_event(uint64_t id, uint32_t events) {
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
    on_datagram_(c.peer, std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
  }
}

void SeqpacketServer::send(const Peer& to, std::vector<uint8_t> datagram) {
  auto it = connections_.find(to.id);
  if (it == connections_.end() || it->second->closed) return;
  it->second->out.push_back(std::move(datagram));
  flush(*it->second);
}

void SeqpacketServer::send_all(const std::vector<uint8_t>& datagram) {
  for (auto& [id, c] : connections_) {
    if (c->closed) continue;
    c->out.push_back(datagram);
    flush(*c);
  }
}

void SeqpacketServer::flush(Connection& c) {
  while (!c.out.empty() && !c.closed) {
    const std::vector<uint8_t>& d = c.out.front();
    const ssize_t n = ::send(c.fd.get(), d.data(), d.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
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

void SeqpacketServer::close(Connection& c) {
  c.closed = true;
  c.watch = IoWatch();
  c.out.clear();
  c.fd.reset();
}

size_t SeqpacketServer::close_all() {
  size_t n = 0;
  for (auto& [id, c] : connections_) {
    if (c->closed) continue;
    close(*c);
    ++n;
  }
  return n;
}

void SeqpacketServer::reap() {
  std::erase_if(connections_, [](const auto& entry) { return entry.second->closed; });
}

}  // namespace rdmasim
