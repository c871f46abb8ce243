#include "client/client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>

#include "rdma_eventd/internal/enum_names.h"
#include "schema/protocol_json.h"

namespace rdma_eventd {
namespace {

// Lines from the daemon are records (a few KiB at most) and replies (a status reply lists every
// subscriber); anything longer is not the daemon speaking.
constexpr size_t kMaxLineBytes = 64u << 20;
constexpr size_t kReadChunk = 64 * 1024;

using SteadyClock = std::chrono::steady_clock;

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

// Milliseconds left until the deadline, for poll(): -1 without one.
int poll_timeout(std::optional<SteadyClock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - SteadyClock::now());
  return left.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX));
}

std::optional<SteadyClock::time_point> deadline_of(Client::Duration timeout) {
  if (timeout.count() < 0) return std::nullopt;
  return SteadyClock::now() + timeout;
}

// A message call() kept aside. The queue holds this local type, not Message itself: a standard
// container of an exported type is a template instance with default visibility, and one the
// compiler leaves out of line (as the sanitizer builds do) would join the library's ABI through
// the map's rdma_eventd::* pattern (its demangled name begins with the return type).
struct KeptMessage {
  Message message;
};

}  // namespace

struct Client::Impl {
  int fd = -1;
  Hello hello;
  std::string in;  // received bytes; in_pos is the start of the first unread line
  size_t in_pos = 0;
  std::string out;               // request bytes the socket did not take yet
  std::deque<KeptMessage> kept;  // messages that arrived while call() waited for its reply
  std::optional<Filter> filter;
  uint64_t next_id = 1;
  bool eof = false;
  std::string last_error;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  ClientStatus fail(ClientStatus s, std::string why) {
    last_error = std::move(why);
    return s;
  }

  // Sends what the socket takes now. kOk also when some bytes must wait.
  ClientStatus flush() {
    while (!out.empty()) {
      const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ClientStatus::kOk;
      if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
        return fail(ClientStatus::kClosed, "the daemon closed the connection");
      }
      if (n < 0) return fail(ClientStatus::kIo, errno_text("writing to the socket", errno));
      out.erase(0, static_cast<size_t>(n));
    }
    return ClientStatus::kOk;
  }

  // Reads what is available now. Returns kOk (maybe with nothing read), kIo, or kProtocol.
  ClientStatus read_available() {
    while (!eof) {
      if (in_pos > 0 && in_pos >= in.size() / 2) {
        in.erase(0, in_pos);
        in_pos = 0;
      }
      const size_t old = in.size();
      in.resize(old + kReadChunk);
      const ssize_t n = ::recv(fd, in.data() + old, kReadChunk, MSG_DONTWAIT);
      in.resize(old + static_cast<size_t>(n > 0 ? n : 0));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n < 0 && errno == ECONNRESET) {
        eof = true;
        break;
      }
      if (n < 0) return fail(ClientStatus::kIo, errno_text("reading from the socket", errno));
      if (n == 0) {
        eof = true;
        break;
      }
      if (in.size() - in_pos > kMaxLineBytes && in.find('\n', in_pos) == std::string::npos) {
        return fail(ClientStatus::kProtocol, "the daemon sent a line of more than " +
                                                 std::to_string(kMaxLineBytes) + " bytes");
      }
      if (static_cast<size_t>(n) < kReadChunk) break;  // drained; spare a syscall
    }
    return ClientStatus::kOk;
  }

  bool has_line() const { return in.find('\n', in_pos) != std::string::npos; }

  // The next complete line, parsed. kNoMessage when none is buffered.
  ClientStatus take_line(Message& m) {
    const size_t nl = in.find('\n', in_pos);
    if (nl == std::string::npos) return ClientStatus::kNoMessage;
    const std::string_view text(in.data() + in_pos, nl - in_pos);
    in_pos = nl + 1;
    std::string why;
    auto parsed = parse_line(text, &why);
    if (!parsed) return fail(ClientStatus::kProtocol, "unreadable line from the daemon: " + why);
    m = std::move(*parsed);
    return ClientStatus::kOk;
  }

  bool wanted(const Message& m) const {
    if (!filter) return true;
    if (const Record* r = m.record()) return filter->matches(key_of(*r));
    if (const PortSnapshot* s = m.snapshot()) {
      return filter->matches_port(s->device, s->node_guid, s->port.port);
    }
    return true;
  }

  // The next wanted message from the socket (not from `kept`).
  ClientStatus next_from_socket(Message& m) {
    for (;;) {
      const ClientStatus s = take_line(m);
      if (s == ClientStatus::kOk) {
        if (wanted(m)) return s;
        continue;
      }
      if (s != ClientStatus::kNoMessage) return s;
      if (eof) {
        return fail(ClientStatus::kClosed, in_pos < in.size()
                                               ? "the daemon closed the connection mid-line"
                                               : "the daemon closed the connection");
      }
      const size_t before = in.size() - in_pos;
      if (ClientStatus r = read_available(); r != ClientStatus::kOk) return r;
      if (!eof && in.size() - in_pos == before) return ClientStatus::kNoMessage;
    }
  }

  ClientStatus next(Message& m) {
    if (!kept.empty()) {
      m = std::move(kept.front().message);
      kept.pop_front();
      return ClientStatus::kOk;
    }
    if (ClientStatus s = flush(); s != ClientStatus::kOk && s != ClientStatus::kClosed) return s;
    return next_from_socket(m);
  }

  ClientStatus wait(std::optional<SteadyClock::time_point> deadline) {
    for (;;) {
      if (!kept.empty() || has_line()) return ClientStatus::kOk;
      if (eof) return fail(ClientStatus::kClosed, "the daemon closed the connection");
      if (ClientStatus s = flush(); s != ClientStatus::kOk) return s;
      pollfd p{fd, static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0};
      const int n = ::poll(&p, 1, poll_timeout(deadline));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(ClientStatus::kIo, errno_text("poll", errno));
      if (n == 0) return fail(ClientStatus::kTimeout, "timed out waiting for the daemon");
      if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
        if (ClientStatus s = read_available(); s != ClientStatus::kOk) return s;
      }
    }
  }

  ClientStatus next_wait(Message& m, std::optional<SteadyClock::time_point> deadline) {
    for (;;) {
      ClientStatus s = next(m);
      if (s != ClientStatus::kNoMessage) return s;
      // Only a partial line, or lines the filter drops: wait for more.
      s = wait(deadline);
      if (s != ClientStatus::kOk) return s;
    }
  }

  ClientStatus send(Request r, uint64_t* id) {
    if (fd < 0) return fail(ClientStatus::kInvalid, "not connected");
    const uint64_t n = next_id++;
    r.id = std::to_string(n);
    out += request_json(r);
    out += '\n';
    if (id) *id = n;
    if (r.op == Op::kSubscribe)
      filter = r.filter.matches_everything() ? std::nullopt : std::optional(r.filter);
    return flush();
  }
};

std::string_view client_status_name(ClientStatus s) {
  // Indexed by -ClientStatus: kOk 0, kNoMessage -1, ... kFull -10.
  static constexpr std::array<std::string_view, 11> kNames = {
      "RDMAEV_OK",        "RDMAEV_E_NO_MESSAGE", "RDMAEV_E_TIMEOUT", "RDMAEV_E_INVAL",
      "RDMAEV_E_CONNECT", "RDMAEV_E_IO",         "RDMAEV_E_CLOSED",  "RDMAEV_E_PROTOCOL",
      "RDMAEV_E_REFUSED", "RDMAEV_E_NOMEM",      "RDMAEV_E_FULL"};
  return internal::enum_name(kNames, -static_cast<int64_t>(s), "RDMAEV_E_UNKNOWN");
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

ClientStatus Client::connect(const std::string& path, Duration timeout,
                             std::unique_ptr<Client>& out, std::string* error) {
  out.reset();
  auto impl = std::make_unique<Impl>();
  auto failed = [&](ClientStatus s, std::string why) {
    if (error) *error = std::move(why);
    return s;
  };
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return failed(ClientStatus::kInvalid, "'" + path + "': not a usable socket path");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  impl->fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (impl->fd < 0) return failed(ClientStatus::kConnect, errno_text("socket", errno));
  // A blocking connect: a Unix socket connects at once, or waits while the daemon's backlog is
  // full; SO_SNDTIMEO bounds that wait.
  if (timeout.count() >= 0) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
    (void)::setsockopt(impl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  const auto deadline = deadline_of(timeout);
  for (;;) {
    if (::connect(impl->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) break;
    if (errno == EINTR) continue;
    return failed(ClientStatus::kConnect, errno_text(path, errno));
  }
  const int flags = ::fcntl(impl->fd, F_GETFL);
  if (flags < 0 || ::fcntl(impl->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return failed(ClientStatus::kConnect, errno_text("fcntl", errno));
  }
  Message first;
  const ClientStatus s = impl->next_wait(first, deadline);
  if (s != ClientStatus::kOk) {
    return failed(s, path + ": no hello from the daemon: " + impl->last_error);
  }
  if (const RequestError* e = first.error()) {
    return failed(ClientStatus::kRefused, path + ": refused: " + e->message);
  }
  const Hello* hello = first.hello();
  if (!hello) {
    return failed(ClientStatus::kProtocol, path + ": expected a hello, got a " +
                                               std::string(message_kind_name(first.kind())));
  }
  if (hello->protocol != kProtocolVersion) {
    return failed(ClientStatus::kProtocol, path + ": the daemon speaks protocol " +
                                               std::to_string(hello->protocol) + ", this library " +
                                               std::to_string(kProtocolVersion));
  }
  impl->hello = *hello;
  out.reset(new Client(std::move(impl)));
  return ClientStatus::kOk;
}

int Client::fd() const {
  return impl_->fd;
}

const Hello& Client::hello() const {
  return impl_->hello;
}

ClientStatus Client::next(Message& out) {
  return impl_->next(out);
}

ClientStatus Client::wait(Duration timeout) {
  return impl_->wait(deadline_of(timeout));
}

ClientStatus Client::next(Message& out, Duration timeout) {
  return impl_->next_wait(out, deadline_of(timeout));
}

ClientStatus Client::subscribe(const Filter& filter, uint64_t* id) {
  Request r;
  r.op = Op::kSubscribe;
  r.filter = filter;
  return impl_->send(std::move(r), id);
}

ClientStatus Client::snapshot(uint64_t* id) {
  return impl_->send(Request{Op::kSnapshot}, id);
}

ClientStatus Client::since(uint64_t seq, const std::string& stream, uint64_t* id) {
  Request r;
  r.op = Op::kSince;
  r.seq = seq;
  r.stream = stream;
  return impl_->send(std::move(r), id);
}

ClientStatus Client::status(uint64_t* id) {
  return impl_->send(Request{Op::kStatus}, id);
}

ClientStatus Client::ping(uint64_t* id) {
  return impl_->send(Request{Op::kPing}, id);
}

ClientStatus Client::call(Request request, Duration timeout, Message& reply) {
  const auto deadline = deadline_of(timeout);
  uint64_t id = 0;
  if (ClientStatus s = impl_->send(std::move(request), &id); s != ClientStatus::kOk) return s;
  const std::string id_text = std::to_string(id);
  // Messages read here go behind those already kept, so next() still returns them in order.
  std::deque<KeptMessage> kept = std::move(impl_->kept);
  impl_->kept.clear();
  ClientStatus result;
  for (;;) {
    Message m;
    result = impl_->next_wait(m, deadline);
    if (result != ClientStatus::kOk) break;
    const bool ours =
        (m.reply() && m.reply()->id == id_text) || (m.error() && m.error()->id == id_text);
    if (!ours) {
      kept.push_back(KeptMessage{std::move(m)});
      continue;
    }
    reply = std::move(m);
    if (const RequestError* e = reply.error()) {
      result = impl_->fail(ClientStatus::kRefused,
                           std::string(error_code_name(e->code)) + ": " + e->message);
    }
    break;
  }
  impl_->kept = std::move(kept);
  return result;
}

const std::string& Client::last_error() const {
  return impl_->last_error;
}

}  // namespace rdma_eventd
