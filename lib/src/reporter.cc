// Reporters (client.h, rdmaev_reporter_*): reports from an application's async-event loop, which
// must never wait. One connection, opened without waiting, to the daemon's report socket, where
// no records come (docs/protocol.md, "The report socket"); each report is written to it, or
// queued while the socket takes no more; the replies are read whenever the reporter is called,
// so that the daemon never holds back a reporter's requests because its replies go unread.
//
// Every call does a bounded amount of work: it writes what the socket takes of a bounded queue,
// reads at most kReadPerCall bytes, and parses only reply and error lines, which are short. A
// daemon without a report socket (one older than it, or under a socket unit that passes none)
// is reached on its events socket instead, where records do come: those are skipped by their
// first bytes, never parsed, and the daemon drops for this connection what it cannot send,
// which never holds the daemon up.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "c_api.h"
#include "rdma_eventd/client.h"
#include "rdma_eventd/internal/unique_fd.h"
#include "rdma_eventd/protocol.h"
#include "schema/protocol_json.h"

namespace {

using rdma_eventd::Message;
using rdma_eventd::internal::UniqueFd;

// Bytes read per call at most. Each call makes at most one reply (a send), so reading this much
// per call keeps up with them; and it holds fewer replies (about 50 bytes each) than the
// RDMAEV_REPORTER_KEPT_REPLIES kept, so that a caller reading every reply as it comes, which
// reads only when none is kept, loses none.
constexpr size_t kReadPerCall = 2048;
// The longest reply or error line kept (an error's message names the watched devices); a longer
// one is not the daemon speaking.
constexpr size_t kMaxReplyBytes = 64 * 1024;
// Protocol lines begin with their type (docs/protocol.md, "Lines from the daemon"); only these
// two are read. Records, the hello and lost lines are skipped.
constexpr std::string_view kReplyStart = R"({"type":"reply")";
constexpr std::string_view kErrorStart = R"({"type":"error")";

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

// Connects a non-blocking socket to `path` without waiting: a Unix socket connects at once when
// someone listens, or fails (EAGAIN, a full backlog, is not waited for). On failure the fd is
// empty and errno says why.
UniqueFd connect_now(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return {};
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return {};
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return {};
  return fd;
}

// What a struct rdmaev_reporter* points to; the public struct stays incomplete (c_api.h).
struct Reporter {
  UniqueFd fd;
  std::string out;        // report lines the socket did not take yet: RDMAEV_REPORTER_QUEUE_BYTES
  std::string line;       // the start of the line being read, while it may be a reply or an error
  bool skipping = false;  // the rest of the line being read is skipped
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

  // Reads what is available now, kReadPerCall bytes at most, and keeps the replies among it.
  void read_some() {
    char buf[kReadPerCall];
    ssize_t n;
    do {
      n = ::recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      closed = true;
      if (error.empty()) {
        error = n == 0 ? "the daemon closed the connection"
                       : std::string("reading from the daemon: ") + std::strerror(errno);
      }
      return;
    }
    scan(std::string_view(buf, static_cast<size_t>(n)));
  }

  void scan(std::string_view data) {
    while (!data.empty() && !closed) {
      const size_t nl = data.find('\n');
      const std::string_view part = data.substr(0, nl);
      data.remove_prefix(nl == std::string_view::npos ? data.size() : nl + 1);
      if (!skipping) {
        line.append(part);
        skipping = !may_be_reply(line);
        if (!skipping && line.size() > kMaxReplyBytes) {
          closed = true;
          error =
              "the daemon sent a line of more than " + std::to_string(kMaxReplyBytes) + " bytes";
          return;
        }
      }
      if (nl == std::string_view::npos) return;  // the line goes on in the next read
      if (!skipping) take_line(line);
      line.clear();
      skipping = false;
    }
  }

  // Whether a line that begins with `start` may be a reply or an error line: decided by its
  // first bytes, so that a record is skipped without being read any further.
  static bool may_be_reply(std::string_view start) {
    auto prefix_of = [&](std::string_view kind) {
      const size_t n = std::min(start.size(), kind.size());
      return start.substr(0, n) == kind.substr(0, n);
    };
    return prefix_of(kReplyStart) || prefix_of(kErrorStart);
  }

  // Replies to reports and error lines are kept; other replies are not.
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
    const std::string events = path ? path : RDMAEV_DEFAULT_SOCKET;
    if (events.empty() || events.size() >= sizeof(sockaddr_un::sun_path)) {
      error = "'" + events + "': not a usable socket path";
      return RDMAEV_E_INVAL;
    }
    auto r = std::make_unique<Reporter>();
    // The report socket first. Where there is none, or nobody listens on it, the daemon is one
    // without it: its events socket takes reports too (docs/protocol.md, "Versions").
    const std::string report = rdma_eventd::report_socket_path(events);
    r->fd = connect_now(report);
    if (!r->fd && errno != ENOENT && errno != ECONNREFUSED && errno != ENAMETOOLONG) {
      error = report + ": " + std::strerror(errno);
      return RDMAEV_E_CONNECT;
    }
    if (!r->fd) r->fd = connect_now(events);
    if (!r->fd) {
      error = events + ": " + std::strerror(errno);
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
    r.read_some();
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
    if (r.replies.empty()) r.read_some();
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
