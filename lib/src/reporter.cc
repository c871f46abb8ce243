// Reporters (client.h, rdmaev_reporter_*): reports from an application's async-event loop, which
// must never wait. One connection, opened without waiting; each report is written to it, or
// queued while the socket takes no more; the replies are read whenever the reporter is called,
// so that the daemon never holds back a reporter's requests because its replies go unread.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <new>
#include <string>

#include "c_api.h"
#include "rdma_eventd/client.h"
#include "rdma_eventd/internal/unique_fd.h"
#include "schema/protocol_json.h"

namespace {

using rdma_eventd::Message;

constexpr size_t kReadChunk = 16384;
// Lines from the daemon are short (a reply, an error) or records the reporter skips: a line
// longer than this, with no end, is not the daemon speaking.
constexpr size_t kMaxLineBytes = 1u << 20;

struct ReplyEntry {
  int status = RDMAEV_OK;
  uint64_t id = 0;
  uint64_t seq = 0;
  std::string error;
};

uint64_t numeric_id(const std::string& id) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  return ec == std::errc() && end == id.data() + id.size() ? n : 0;
}

using rdma_eventd::c_api::guarded;

// What a struct rdmaev_reporter* points to; the public struct stays incomplete (c_api.h).
struct Reporter {
  rdma_eventd::internal::UniqueFd fd;
  std::string out;  // report lines the socket did not take yet: RDMAEV_REPORTER_QUEUE_BYTES
  std::string in;   // bytes read, up to the end of the last complete line
  std::deque<ReplyEntry> replies;  // RDMAEV_REPORTER_KEPT_REPLIES at most, oldest first
  uint64_t next_id = 1;
  bool closed = false;  // the daemon closed the connection (or writing to it failed)
  std::string error;

  int fail(int status, std::string why) {
    error = std::move(why);
    return status;
  }

  // Writes what the socket takes now.
  void flush() {
    while (!out.empty() && !closed) {
      const ssize_t n = ::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0) {
        closed = true;
        error = std::string("writing to the daemon: ") + std::strerror(errno);
        return;
      }
      out.erase(0, static_cast<size_t>(n));
    }
  }

  // Reads what is available now and keeps the replies among the complete lines.
  void read_available() {
    char buf[kReadChunk];
    while (!closed) {
      const ssize_t n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        closed = true;
        if (error.empty()) {
          error = n == 0 ? "the daemon closed the connection"
                         : std::string("reading from the daemon: ") + std::strerror(errno);
        }
        return;
      }
      in.append(buf, static_cast<size_t>(n));
      take_lines();
    }
  }

  void take_lines() {
    size_t pos = 0;
    for (size_t nl; (nl = in.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      take_line(std::string_view(in.data() + pos, nl - pos));
    }
    in.erase(0, pos);
    if (in.size() > kMaxLineBytes) {
      closed = true;
      error = "the daemon sent a line of more than " + std::to_string(kMaxLineBytes) + " bytes";
    }
  }

  // Replies to reports and error lines are kept; the hello, records (a reporter's connection
  // gets them like any other) and other replies are not.
  void take_line(std::string_view text) {
    std::string why;
    const std::optional<Message> m = rdma_eventd::parse_line(text, &why);
    if (!m) return;
    ReplyEntry e;
    if (const rdma_eventd::Reply* r = m->reply()) {
      if (r->op != rdma_eventd::Op::kReport) return;
      e.id = numeric_id(r->id);
      e.seq = r->seq;
    } else if (const rdma_eventd::RequestError* err = m->error()) {
      e.status = RDMAEV_E_REFUSED;
      e.id = numeric_id(err->id);
      e.error = std::string(rdma_eventd::error_code_name(err->code)) + ": " + err->message;
    } else {
      return;
    }
    if (replies.size() >= RDMAEV_REPORTER_KEPT_REPLIES) replies.pop_front();
    replies.push_back(std::move(e));
  }
};

Reporter* box(rdmaev_reporter* r) {
  return reinterpret_cast<Reporter*>(r);
}
const Reporter* box(const rdmaev_reporter* r) {
  return reinterpret_cast<const Reporter*>(r);
}

}  // namespace

extern "C" {

int rdmaev_reporter_open(const char* path, rdmaev_reporter** reporter) {
  if (!reporter) return RDMAEV_E_INVAL;
  *reporter = nullptr;
  return guarded([&]() -> int {
    std::string& error = rdma_eventd::c_api::thread_last_error();
    const std::string p = path ? path : RDMAEV_DEFAULT_SOCKET;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (p.empty() || p.size() >= sizeof addr.sun_path) {
      error = "'" + p + "': not a usable socket path";
      return RDMAEV_E_INVAL;
    }
    std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
    auto r = std::make_unique<Reporter>();
    r->fd = rdma_eventd::internal::UniqueFd(
        ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!r->fd) {
      error = std::string("socket: ") + std::strerror(errno);
      return RDMAEV_E_CONNECT;
    }
    // A Unix socket connects at once when someone listens, or fails: EAGAIN (the backlog is
    // full) is not waited for.
    int rc;
    do {
      rc = ::connect(r->fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
      error = p + ": " + std::strerror(errno);
      return RDMAEV_E_CONNECT;
    }
    *reporter = reinterpret_cast<rdmaev_reporter*>(r.release());
    return RDMAEV_OK;
  });
}

void rdmaev_reporter_close(rdmaev_reporter* reporter) {
  if (!reporter) return;
  box(reporter)->flush();
  delete box(reporter);
}

const char* rdmaev_reporter_last_error(const rdmaev_reporter* reporter) {
  return reporter ? box(reporter)->error.c_str() : "";
}

int rdmaev_reporter_get_fd(const rdmaev_reporter* reporter, int* fd, short* events) {
  if (!reporter || !fd) return RDMAEV_E_INVAL;
  *fd = box(reporter)->fd.get();
  if (events) *events = static_cast<short>(POLLIN | (box(reporter)->out.empty() ? 0 : POLLOUT));
  return RDMAEV_OK;
}

int rdmaev_reporter_send(rdmaev_reporter* reporter, const rdmaev_event_report* report,
                         uint64_t* id) {
  if (!reporter) return RDMAEV_E_INVAL;
  Reporter& r = *box(reporter);
  return guarded([&]() -> int {
    rdma_eventd::Request request;
    request.op = rdma_eventd::Op::kReport;
    if (const int status = rdma_eventd::c_api::copy_report(report, request.report, r.error);
        status != RDMAEV_OK)
      return status;
    r.read_available();
    r.flush();
    if (r.closed) return RDMAEV_E_CLOSED;
    const uint64_t n = r.next_id;
    request.id = std::to_string(n);
    std::string line = rdma_eventd::request_json(request) + "\n";
    if (r.out.size() + line.size() > RDMAEV_REPORTER_QUEUE_BYTES) {
      return r.fail(RDMAEV_E_FULL, "the daemon has not read the last " +
                                       std::to_string(r.out.size()) +
                                       " bytes of reports; this one was not sent");
    }
    r.out += line;
    ++r.next_id;
    if (id) *id = n;
    r.flush();  // a failure shows on the next call: this report may be read already
    return RDMAEV_OK;
  });
}

int rdmaev_reporter_next_reply(rdmaev_reporter* reporter, uint64_t* id, uint64_t* seq) {
  if (!reporter) return RDMAEV_E_INVAL;
  Reporter& r = *box(reporter);
  return guarded([&]() -> int {
    r.flush();
    r.read_available();
    if (r.replies.empty()) return r.closed ? RDMAEV_E_CLOSED : RDMAEV_E_NO_MESSAGE;
    ReplyEntry e = std::move(r.replies.front());
    r.replies.pop_front();
    if (id) *id = e.id;
    if (seq) *seq = e.seq;
    if (e.status != RDMAEV_OK) r.error = std::move(e.error);
    return e.status;
  });
}

}  // extern "C"
