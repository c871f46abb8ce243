// The C++ API of the rdma-eventd subscriber client: a header-only wrapper over the C API
// (client.h). Everything here is inline and compiles into the caller, so no C++ type is part of
// librdma-eventd.so's ABI: the library exports only rdmaev_*, and these classes may change with
// the header without a new soname.
//
//   rdmaev::Client c;
//   if (rdmaev::Client::connect(nullptr, 5s, c) != rdmaev::Status::kOk)
//     std::cerr << rdmaev::Client::connect_error() << "\n";
//   rdmaev::Filter f;
//   f.add_port("mlx5_0/1");
//   c.subscribe(f);
//   poll c.fd() for POLLIN in your loop; on every wakeup:
//   rdmaev::MessageView m;
//   while (c.next(m) == rdmaev::Status::kOk)             // kNoMessage: nothing complete yet
//     if (m.kind() == rdmaev::Kind::kRecord) handle(m.event(), m.device(), m.port(), m.json());
//
// The rules are the C API's: nothing is printed or thrown, every call returns a Status and
// last_error() says what went wrong; a MessageView stays valid until the next next() on its
// client, or the client's end; a client is used from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rdma_eventd/client.h"

namespace rdmaev {

enum class Status : int {
  kOk = RDMAEV_OK,
  kNoMessage = RDMAEV_E_NO_MESSAGE,  // nothing complete to return now: not an error
  kTimeout = RDMAEV_E_TIMEOUT,
  kInvalid = RDMAEV_E_INVAL,
  kConnect = RDMAEV_E_CONNECT,
  kIo = RDMAEV_E_IO,
  kClosed = RDMAEV_E_CLOSED,
  kProtocol = RDMAEV_E_PROTOCOL,
  kRefused = RDMAEV_E_REFUSED,
  kNoMemory = RDMAEV_E_NOMEM,
  kFull = RDMAEV_E_FULL,  // a reporter's queue is full (rdmaev_reporter_send)
};

enum class Kind : int {
  kRecord = RDMAEV_RECORD,
  kSnapshot = RDMAEV_SNAPSHOT,
  kHello = RDMAEV_HELLO,
  kReply = RDMAEV_REPLY,
  kError = RDMAEV_ERROR,
  kLost = RDMAEV_LOST,
};

using Duration = std::chrono::milliseconds;
inline constexpr Duration kForever{-1};

namespace detail {

inline std::string_view view(const char* s) {
  return s ? std::string_view(s) : std::string_view();
}

// Negative: no limit; longer than an int holds: the longest that does.
inline int timeout_ms(Duration timeout) {
  if (timeout.count() < 0) return -1;
  if (timeout.count() > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
  return static_cast<int>(timeout.count());
}

}  // namespace detail

// "RDMAEV_E_TIMEOUT" and friends.
inline std::string_view status_name(Status s) {
  return detail::view(rdmaev_strerror(static_cast<int>(s)));
}

// One message from the daemon, as the C API's accessors see it. Empty by default (no message).
// Strings are views into the message: valid as long as it is.
class MessageView {
 public:
  struct Lost {
    uint64_t first_seq = 0;
    uint64_t last_seq = 0;
    uint64_t records = 0;
  };

  MessageView() = default;
  explicit MessageView(const rdmaev_message* m) : m_(m) {}

  bool empty() const { return m_ == nullptr; }
  Kind kind() const { return static_cast<Kind>(rdmaev_message_kind(m_)); }
  // The line as received: one JSON object, no newline. Keys this header does not name (the
  // record schema's full content) are read from here.
  std::string_view json() const { return detail::view(rdmaev_message_json(m_)); }
  // Records and snapshot records (replies: seq only); "" or 0 where the message has no such field.
  uint64_t seq() const { return rdmaev_message_seq(m_); }
  std::string_view event() const { return detail::view(rdmaev_message_event(m_)); }
  std::string_view severity() const { return detail::view(rdmaev_message_severity(m_)); }
  std::string_view device() const { return detail::view(rdmaev_message_device(m_)); }
  uint32_t port() const { return rdmaev_message_port(m_); }
  // The port's state ("active"...); nullopt when the message has no port block.
  std::optional<std::string_view> port_state() const {
    const char* s = rdmaev_message_port_state(m_);
    return s ? std::optional<std::string_view>(s) : std::nullopt;
  }
  // Kind::kLost only.
  std::optional<Lost> lost() const {
    Lost l;
    if (rdmaev_message_lost(m_, &l.first_seq, &l.last_seq, &l.records) != RDMAEV_OK)
      return std::nullopt;
    return l;
  }
  // Replies and errors.
  uint64_t request_id() const { return rdmaev_message_request_id(m_); }
  std::string_view op() const { return detail::view(rdmaev_message_op(m_)); }
  std::string_view error() const { return detail::view(rdmaev_message_error(m_)); }
  std::string_view error_text() const { return detail::view(rdmaev_message_error_text(m_)); }

  const rdmaev_message* get() const { return m_; }

 private:
  const rdmaev_message* m_ = nullptr;
};

// A subscription filter: each add_* widens its list, the lists combine with AND. An empty
// filter matches every record. The adders check their argument (kInvalid for an unknown event
// name, a bad DEV/PORT or severity).
class Filter {
 public:
  Status add_event(const std::string& name) { return add(rdmaev_filter_add_event, name); }
  Status add_device(const std::string& pattern) { return add(rdmaev_filter_add_device, pattern); }
  Status add_port(const std::string& dev_port) { return add(rdmaev_filter_add_port, dev_port); }
  Status set_min_severity(const std::string& severity) {
    return add(rdmaev_filter_set_min_severity, severity);
  }

  const rdmaev_filter* get() const { return f_.get(); }

 private:
  struct Delete {
    void operator()(rdmaev_filter* f) const noexcept { rdmaev_filter_delete(f); }
  };

  Status add(int (*fn)(rdmaev_filter*, const char*), const std::string& arg) {
    if (!f_) {
      rdmaev_filter* f = nullptr;
      if (const int rc = rdmaev_filter_new(&f); rc != RDMAEV_OK) return static_cast<Status>(rc);
      f_.reset(f);
    }
    return static_cast<Status>(fn(f_.get(), arg.c_str()));
  }

  std::unique_ptr<rdmaev_filter, Delete> f_;
};

// A connection to the daemon's socket; owns its rdmaev_client. Empty until connect() fills it.
class Client {
 public:
  // Connects to `path` (nullptr: RDMAEV_DEFAULT_SOCKET) and reads the hello, waiting up to
  // `timeout`. On failure `out` is left as it was and connect_error() says why.
  static Status connect(const char* path, Duration timeout, Client& out) {
    rdmaev_client* c = nullptr;
    const int rc = rdmaev_connect(path, detail::timeout_ms(timeout), &c);
    if (rc == RDMAEV_OK) out.c_.reset(c);
    return static_cast<Status>(rc);
  }
  // Why this thread's last connect() (or report()) failed.
  static std::string_view connect_error() { return detail::view(rdmaev_last_error(nullptr)); }

  bool connected() const { return c_ != nullptr; }
  // The socket, to poll for POLLIN; -1 when not connected.
  int fd() const {
    int fd = -1;
    return c_ && rdmaev_get_fd(c_.get(), &fd) == RDMAEV_OK ? fd : -1;
  }
  // The hello: the daemon's stream id, the seq when this client connected, its version.
  std::string_view stream() const { return detail::view(rdmaev_stream(c_.get())); }
  uint64_t hello_seq() const { return rdmaev_hello_seq(c_.get()); }
  std::string_view daemon_version() const { return detail::view(rdmaev_daemon_version(c_.get())); }

  // The next message without blocking (kNoMessage: none complete yet), or waiting up to
  // `timeout` for it. `out` is valid until the next call of either.
  Status next(MessageView& out) { return take(rdmaev_next(c_.get(), &raw_), out); }
  Status next(MessageView& out, Duration timeout) {
    return take(rdmaev_next_wait(c_.get(), detail::timeout_ms(timeout), &raw_), out);
  }
  // Blocks until next() has something to return, the connection ends or `timeout` passes.
  Status wait(Duration timeout) {
    return static_cast<Status>(rdmaev_wait(c_.get(), detail::timeout_ms(timeout)));
  }

  // Requests; they never block. *id (when given) receives the id echoed in the reply.
  Status subscribe(const Filter& filter, uint64_t* id = nullptr) {
    return static_cast<Status>(rdmaev_subscribe(c_.get(), filter.get(), id));
  }
  Status snapshot(uint64_t* id = nullptr) {
    return static_cast<Status>(rdmaev_snapshot(c_.get(), id));
  }
  // The records after `seq` of `stream` ("": the daemon's current stream).
  Status since(uint64_t seq, const std::string& stream = "", uint64_t* id = nullptr) {
    return static_cast<Status>(rdmaev_since(c_.get(), stream.c_str(), seq, id));
  }
  Status status(uint64_t* id = nullptr) { return static_cast<Status>(rdmaev_status(c_.get(), id)); }
  Status ping(uint64_t* id = nullptr) { return static_cast<Status>(rdmaev_ping(c_.get(), id)); }

  // What went wrong in the last call that did not return kOk or kNoMessage.
  std::string_view last_error() const {
    return c_ ? detail::view(rdmaev_last_error(c_.get())) : std::string_view();
  }

  rdmaev_client* get() const { return c_.get(); }

 private:
  struct Close {
    void operator()(rdmaev_client* c) const noexcept { rdmaev_close(c); }
  };

  static Status take(int rc, const rdmaev_message* raw, MessageView& out) {
    out = MessageView(rc == RDMAEV_OK ? raw : nullptr);
    return static_cast<Status>(rc);
  }
  Status take(int rc, MessageView& out) { return take(rc, raw_, out); }

  std::unique_ptr<rdmaev_client, Close> c_;
  const rdmaev_message* raw_ = nullptr;
};

// An application report (docs/protocol.md, "report"): an affiliated async event the application
// read, which the daemon cannot see.
struct Report {
  int event_type = 0;      // enum ibv_event_type
  std::string device;      // ibv_get_device_name()
  uint32_t port = 0;       // 0: none
  int64_t object_id = -1;  // the QP number, or the CQ/SRQ/WQ handle; -1: none
  std::string detail;      // "": none
};

// Sends `r` over a connection of its own, waiting at most `timeout` in all; any thread may call
// it. *seq (when given) receives the app_report record's seq; on failure
// Client::connect_error() says why. path nullptr: RDMAEV_DEFAULT_SOCKET.
inline Status report(const Report& r, Duration timeout, uint64_t* seq = nullptr,
                     const char* path = nullptr) {
  rdmaev_event_report c = RDMAEV_EVENT_REPORT_INIT;
  c.event_type = r.event_type;
  c.device = r.device.c_str();
  c.port = r.port;
  c.object_id = r.object_id;
  c.detail = r.detail.empty() ? nullptr : r.detail.c_str();
  return static_cast<Status>(rdmaev_report(path, &c, detail::timeout_ms(timeout), seq));
}

}  // namespace rdmaev
