// The subscriber protocol, v1: one JSON object per line in both directions over a Unix stream
// socket (docs/protocol.md). Shared by the daemon and every client, so both sides agree on every
// name.
//
// Lines from the daemon are either records (schema v1, exactly as in the journal's RDMA_RECORD,
// or snapshot records) or protocol lines. Protocol lines always begin with a "type" key, which
// records never have: hello, reply, error, lost. A client receives each as a Message.
//
// Internal to the project (the daemon, rdma-eventctl, the tests): linked statically, never
// installed, never exported by librdma-eventd.so, whose API is the C API (client.h). The
// daemon's side (request parsing, writing the lines) lives in internal/schema.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdma_eventd/record.h"

namespace rdma_eventd {

inline constexpr int kProtocolVersion = 1;
inline constexpr const char* kDefaultSocketPath = "/run/rdma-eventd/events.sock";

// The report socket (docs/protocol.md, "The report socket"): where reporters connect, beside the
// events socket, at its path with this suffix. A client finds it from the events socket's path
// alone, without asking the daemon anything: a reporter must not wait.
inline constexpr std::string_view kReportSocketSuffix = ".report";
std::string report_socket_path(std::string_view events_socket_path);

// --- filters ----------------------------------------------------------------------------------

// A device pattern: a node GUID ("248a:0703:00a1:b2c0" or "0x248a070300a1b2c0"), a shell glob
// on the device name ("mlx5_*"), or a plain name. The daemon's devices.include and
// devices.exclude are read as these too.
class DevicePattern {
 public:
  // nullopt (and *error) for an empty pattern.
  static std::optional<DevicePattern> parse(std::string_view text, std::string* error);

  bool matches(std::string_view device, std::string_view node_guid) const;
  const std::string& text() const { return text_; }
  friend bool operator==(const DevicePattern& a, const DevicePattern& b) {
    return a.text_ == b.text_;
  }

 private:
  std::string text_;
  std::string node_guid_;  // the GUID as records write it, when the pattern is a GUID
  bool glob_ = false;
};

// "DEV/PORT": a device pattern and a port number, e.g. "mlx5_0/1" or "mlx5_*/2".
struct PortPattern {
  DevicePattern device;
  uint32_t port = 0;

  static std::optional<PortPattern> parse(std::string_view text, std::string* error);
  std::string text() const;
  friend bool operator==(const PortPattern&, const PortPattern&) = default;
};

// What a filter looks at.
struct RecordKey {
  EventKind event = EventKind::kUnknown;
  Severity severity = Severity::kInfo;
  std::string_view device;
  std::string_view node_guid;
  uint32_t port = 0;
  bool port_scoped = false;  // the record has a port block for `port`
  // device_renamed: the name the device had, which a filter's device and port patterns match
  // too, so that a subscriber that named the device hears that it was renamed.
  std::string_view old_name;
};
RecordKey key_of(const Record& record);
// Whether the record is about one port (RecordKey::port_scoped): it has a port block, or it is
// a port_health record, which has none but is about one port (a port pattern matches it only
// for that port).
inline bool port_scoped(const Record& r) {
  return r.port_info.has_value() || r.event == EventKind::kPortHealth;
}

// Which records a subscriber receives. Every list that is not empty must match (a list matches
// when one of its entries does); an empty list and no min_severity match everything.
struct Filter {
  std::vector<EventKind> events;
  std::vector<DevicePattern> devices;
  // A port-scoped record matches when one pattern names its device and port; a device-wide
  // record (device_fatal) when one pattern names its device. A device_renamed record matches
  // patterns of its old name as well as of its new one.
  std::vector<PortPattern> ports;
  std::optional<Severity> min_severity;

  // Inline for a filter that takes everything, as most subscribers' does: the hub asks for every
  // record and every subscriber.
  bool matches(const RecordKey& record) const {
    return matches_everything() || matches_patterns(record);
  }
  // Snapshot records are state, not events: only devices and ports apply to them.
  bool matches_port(std::string_view device, std::string_view node_guid, uint32_t port) const;
  bool matches_everything() const {
    return events.empty() && devices.empty() && ports.empty() && !min_severity;
  }
  friend bool operator==(const Filter&, const Filter&) = default;

 private:
  bool matches_patterns(const RecordKey& record) const;
};

// --- requests ---------------------------------------------------------------------------------

enum class Op : uint8_t {
  kSubscribe,
  kSnapshot,
  kSince,
  kStatus,
  kPing,
  kReport,
  kHealth,
  kInventory,
  kRetire
};
std::string_view op_name(Op op);
std::optional<Op> op_from_name(std::string_view name);

// --- application reports ----------------------------------------------------------------------

// The affiliated async events an application may report (docs/protocol.md, "report"): the ones
// that say an object failed. COMM_EST, SQ_DRAINED, PATH_MIG, SRQ_LIMIT_REACHED and
// QP_LAST_WQE_REACHED are not: they are the normal life of healthy connections.
struct ReportableEvent {
  int type;                 // the ibv_event_type number
  std::string_view name;    // "qp_fatal"
  std::string_view object;  // "qp", "cq", "srq" or "wq"
  std::string_view key;     // the request's key for the object's number: "qp_num", "cq", ...
};
// nullptr when the type (or name) is not one of them.
const ReportableEvent* reportable_event(int type);
const ReportableEvent* reportable_event(std::string_view name);

inline constexpr size_t kMaxReportDetailBytes = 256;

// A report request's body: what the application saw. The daemon adds who it is.
struct Report {
  int event_type = -1;  // a reportable event's ibv_event_type number
  std::string device;
  uint32_t port = 0;       // 0: not given
  int64_t object_id = -1;  // the QP number or CQ/SRQ/WQ handle; -1: not given
  std::string detail;      // at most kMaxReportDetailBytes, no control characters
  friend bool operator==(const Report&, const Report&) = default;
};

struct Request {
  Op op = Op::kPing;
  std::string id;       // the request's "id" as JSON text (a number or a string); "" when absent
  Filter filter;        // subscribe
  uint64_t seq = 0;     // since: replay the records after this seq
  std::string stream;   // since: the stream that seq belongs to; "" when not given
  Report report;        // report
  std::string adapter;  // retire: a node GUID, or the name the adapter last had
  friend bool operator==(const Request&, const Request&) = default;
};

// Error codes of error lines, by their wire names.
enum class ErrorCode : uint8_t {
  kInvalidJson,         // "invalid_json": the line is not JSON
  kBadRequest,          // "bad_request": not an object, no op, a key of the wrong type or unknown
  kUnknownOp,           // "unknown_op"
  kBadFilter,           // "bad_filter": a subscribe filter names something that does not exist
  kRequestTooLong,      // "request_too_long": the line is over the limit (the daemon then closes)
  kTooManySubscribers,  // "too_many_subscribers": refused at connect (the daemon then closes)
  kAccessDenied,        // "access_denied": the peer is not allowed (the daemon then closes)
  kTooManyFilters,      // "too_many_filters": a subscribe over the filter limit (nothing changes)
  kRateLimited,         // "rate_limited": over the request rate; the request was not executed
  kBadReport,           // "bad_report": a report names no watched device or a type not reportable
  kReportDenied,        // "report_denied": the peer is not in reports.allow_users/allow_groups
  kTooManyReporters,    // "too_many_reporters": refused at the report socket (the daemon closes)
  kReportsOnly,         // "reports_only": a request the report socket does not take
  kNotPermitted,        // "not_permitted": a request only root may make (retire); nothing changed
  kUnknownAdapter,      // "unknown_adapter": retire names no adapter of the inventory, or several
};
std::string_view error_code_name(ErrorCode code);
std::optional<ErrorCode> error_code_from_name(std::string_view name);

// An error line: a request (or the connection) refused.
struct RequestError {
  ErrorCode code = ErrorCode::kBadRequest;
  std::string message;
  std::string id;  // echoed when the request had a valid one
  std::string op;  // the op when it was readable
  friend bool operator==(const RequestError&, const RequestError&) = default;
};

// --- lines from the daemon --------------------------------------------------------------------

struct Hello {
  int protocol = kProtocolVersion;
  std::string version;  // the daemon's
  std::string stream;
  std::string host;
  uint64_t seq = 0;  // the last record published before this connection
  // This connection's id in the status reply: a subscriber's on the events socket, a reporter's
  // on the report socket (the other is 0, and not written).
  uint64_t subscriber = 0;
  uint64_t max_request_bytes = 0;
  uint64_t reporter = 0;
  friend bool operator==(const Hello&, const Hello&) = default;
};

// Records first_seq..last_seq that this subscriber would have received were dropped: `records`
// of them (the others in the range did not match its filter).
struct Lost {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t records = 0;
  friend bool operator==(const Lost&, const Lost&) = default;
};

// The fields every reply has. The rest of a reply depends on its op (docs/protocol.md); the
// whole line stays available to the caller (Message::text()).
struct Reply {
  std::optional<Op> op;
  std::string id;
  uint64_t seq = 0;
  // since: whether the ring still held the records asked for (false: a snapshot follows).
  std::optional<bool> covered;
  // snapshot, and since when not covered: how many snapshot records follow.
  uint64_t records = 0;
  friend bool operator==(const Reply&, const Reply&) = default;
};

// What a line from the daemon is. Values only grow at the end.
enum class MessageKind : uint8_t { kRecord, kSnapshot, kHello, kReply, kError, kLost };
std::string_view message_kind_name(MessageKind kind);  // "record", ...

// One line from the daemon, parsed: what Client::next() returns. The accessor of the message's kind
// returns its value; the others return nullptr. A default-constructed (or moved-from) message is
// empty: every accessor returns nullptr and text() is "".
class Message {
 public:
  Message();
  ~Message();
  Message(const Message& other);
  Message& operator=(const Message& other);
  Message(Message&& other) noexcept;
  Message& operator=(Message&& other) noexcept;

  bool empty() const;
  // What the message is; kRecord for an empty one, whose record() is nullptr nonetheless.
  MessageKind kind() const;
  // The line as received, without its newline.
  const std::string& text() const;

  const Record* record() const;          // kRecord
  const PortSnapshot* snapshot() const;  // kSnapshot
  const Hello* hello() const;            // kHello
  const Reply* reply() const;            // kReply
  const RequestError* error() const;     // kError
  const Lost* lost() const;              // kLost

 private:
  struct Impl;
  friend struct MessageAccess;  // how the library builds messages
  std::unique_ptr<Impl> impl_;
};

}  // namespace rdma_eventd
