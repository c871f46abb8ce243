// The protocol's names, filters and requests; the daemon's own lines (hello, lost, error).
#include "rdma_eventd/protocol.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "json_reader.h"
#include "rdma_eventd/internal/enum_names.h"
#include "schema/json_error.h"
#include "schema/protocol_json.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 9> kOpNames = {
    "subscribe", "snapshot", "since", "status", "ping", "report", "health", "inventory", "retire"};
constexpr std::array<std::string_view, 15> kErrorNames = {
    "invalid_json",     "bad_request",          "unknown_op",     "bad_filter",
    "request_too_long", "too_many_subscribers", "access_denied",  "too_many_filters",
    "rate_limited",     "bad_report",           "report_denied",  "too_many_reporters",
    "reports_only",     "not_permitted",        "unknown_adapter"};

// ibv_event_type numbers (rdma-core's verbs.h), which this library does not include.
constexpr std::array<ReportableEvent, 7> kReportable = {{
    {0, "cq_err", "cq", "cq"},
    {1, "qp_fatal", "qp", "qp_num"},
    {2, "qp_req_err", "qp", "qp_num"},
    {3, "qp_access_err", "qp", "qp_num"},
    {7, "path_mig_err", "qp", "qp_num"},
    {14, "srq_err", "srq", "srq"},
    {19, "wq_fatal", "wq", "wq"},
}};
constexpr std::array<std::string_view, 6> kMessageKindNames = {"record", "snapshot", "hello",
                                                               "reply",  "error",    "lost"};

constexpr size_t kMaxIdChars = 128;

template <size_t N>
std::string name_list(const std::array<std::string_view, N>& names) {
  std::string out;
  for (auto n : names)
    out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

std::string event_list() {
  std::string out;
  for (int i = 0; i < kEventKindCount; ++i)
    out += (out.empty() ? "" : ", ") + std::string(event_name(static_cast<EventKind>(i)));
  return out;
}

// Thrown inside parse_request only.
struct Bad {
  ErrorCode code;
  std::string message;
};

const std::vector<std::string_view>& keys_of(Op op) {
  static const std::vector<std::string_view> subscribe = {"op",      "id",    "events",
                                                          "devices", "ports", "min_severity"};
  static const std::vector<std::string_view> since = {"op", "id", "seq", "stream"};
  static const std::vector<std::string_view> plain = {"op", "id"};
  static const std::vector<std::string_view> retire = {"op", "id", "adapter"};
  static const std::vector<std::string_view> report = {"op",     "id", "event", "device", "port",
                                                       "qp_num", "cq", "srq",   "wq",     "detail"};
  switch (op) {
    case Op::kReport:
      return report;
    case Op::kSubscribe:
      return subscribe;
    case Op::kSince:
      return since;
    case Op::kRetire:
      return retire;
    default:
      return plain;
  }
}

// A non-empty array of strings, or Bad naming the key.
std::vector<std::string> filter_strings(const json& v, const std::string& key) {
  if (!v.is_array()) throw Bad{ErrorCode::kBadFilter, key + ": expected an array of strings"};
  if (v.empty()) {
    throw Bad{ErrorCode::kBadFilter, key + ": empty list (leave the key out to match everything)"};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      throw Bad{ErrorCode::kBadFilter, key + "[" + std::to_string(i) + "]: expected a string"};
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// req[key]: a list of patterns, each read by Pattern::parse (DevicePattern, PortPattern).
template <typename Pattern>
std::vector<Pattern> filter_patterns(const json& req, const std::string& key) {
  std::vector<Pattern> out;
  std::string error;
  const auto texts = filter_strings(req[key], key);
  for (size_t i = 0; i < texts.size(); ++i) {
    auto p = Pattern::parse(texts[i], &error);
    if (!p) throw Bad{ErrorCode::kBadFilter, key + "[" + std::to_string(i) + "]: " + error};
    out.push_back(std::move(*p));
  }
  return out;
}

Filter parse_filter(const json& req) {
  Filter f;
  if (req.contains("events")) {
    const auto names = filter_strings(req["events"], "events");
    for (size_t i = 0; i < names.size(); ++i) {
      auto kind = event_from_name(names[i]);
      if (!kind) {
        throw Bad{ErrorCode::kBadFilter, "events[" + std::to_string(i) + "]: unknown event '" +
                                             names[i] + "' (" + event_list() + ")"};
      }
      f.events.push_back(*kind);
    }
  }
  if (req.contains("devices")) f.devices = filter_patterns<DevicePattern>(req, "devices");
  if (req.contains("ports")) f.ports = filter_patterns<PortPattern>(req, "ports");
  if (req.contains("min_severity")) {
    const json& v = req["min_severity"];
    if (!v.is_string()) throw Bad{ErrorCode::kBadFilter, "min_severity: expected a string"};
    auto s = severity_from_name(v.get<std::string>());
    if (!s) {
      throw Bad{ErrorCode::kBadFilter, "min_severity: unknown severity '" + v.get<std::string>() +
                                           "' (debug, info, notice, warning, error, critical)"};
    }
    f.min_severity = *s;
  }
  return f;
}

// A report's body (docs/protocol.md, "report"). Whether the device is watched is the daemon's
// to say; everything else is checked here.
Report parse_report(const json& req) {
  Report rep;
  if (!req.contains("event")) throw Bad{ErrorCode::kBadRequest, "event: missing"};
  const json& ev = req["event"];
  const ReportableEvent* e = nullptr;
  if (ev.is_string()) {
    e = reportable_event(ev.get_ref<const std::string&>());
  } else if (ev.is_number_integer()) {
    const int64_t n = ev.get<int64_t>();
    e = n >= 0 && n < 256 ? reportable_event(static_cast<int>(n)) : nullptr;
  } else {
    throw Bad{ErrorCode::kBadRequest, "event: expected a name or an ibv_event_type number"};
  }
  if (!e) {
    std::string names;
    for (const auto& r : kReportable)
      names += (names.empty() ? "" : ", ") + std::string(r.name);
    throw Bad{ErrorCode::kBadReport,
              "event: " + ev.dump() + " is not a reportable affiliated event (" + names + ")"};
  }
  rep.event_type = e->type;
  if (!req.contains("device") || !req["device"].is_string() ||
      req["device"].get_ref<const std::string&>().empty() ||
      req["device"].get_ref<const std::string&>().size() > 64) {
    throw Bad{ErrorCode::kBadRequest, "device: expected a device name (1 to 64 bytes)"};
  }
  rep.device = req["device"].get<std::string>();
  if (req.contains("port")) {
    const json& p = req["port"];
    if (!p.is_number_unsigned() || p.get<uint64_t>() < 1 || p.get<uint64_t>() > 255) {
      throw Bad{ErrorCode::kBadRequest, "port: expected a port number from 1 to 255"};
    }
    rep.port = p.get<uint32_t>();
  }
  for (std::string_view object_key : {"qp_num", "cq", "srq", "wq"}) {
    const std::string key(object_key);
    if (!req.contains(key)) continue;
    if (object_key != e->key) {
      throw Bad{ErrorCode::kBadRequest, key + ": not for " + std::string(e->name) +
                                            " (its object is " + std::string(e->key) + ")"};
    }
    const json& v = req[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX) {
      throw Bad{ErrorCode::kBadRequest, key + ": expected an integer from 0 to 4294967295"};
    }
    rep.object_id = v.get<int64_t>();
  }
  if (req.contains("detail")) {
    if (!req["detail"].is_string()) throw Bad{ErrorCode::kBadRequest, "detail: expected a string"};
    rep.detail = req["detail"].get<std::string>();
    if (rep.detail.size() > kMaxReportDetailBytes) {
      throw Bad{ErrorCode::kBadRequest,
                "detail: longer than " + std::to_string(kMaxReportDetailBytes) + " bytes"};
    }
    if (std::any_of(rep.detail.begin(), rep.detail.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      throw Bad{ErrorCode::kBadRequest, "detail: control characters are not allowed"};
    }
  }
  return rep;
}

void parse_body(const json& req, Request& r) {
  for (const auto& [key, value] : req.items()) {
    const auto& known = keys_of(r.op);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (auto k : known)
        list += (list.empty() ? "" : ", ") + std::string(k);
      throw Bad{ErrorCode::kBadRequest,
                key + ": unknown key for " + std::string(op_name(r.op)) + " (known: " + list + ")"};
    }
  }
  if (r.op == Op::kSubscribe) r.filter = parse_filter(req);
  if (r.op == Op::kReport) r.report = parse_report(req);
  if (r.op == Op::kRetire) {
    if (!req.contains("adapter")) throw Bad{ErrorCode::kBadRequest, "adapter: missing"};
    if (!req["adapter"].is_string() || req["adapter"].get<std::string>().empty()) {
      throw Bad{ErrorCode::kBadRequest, "adapter: expected a node GUID or a name"};
    }
    r.adapter = req["adapter"].get<std::string>();
    if (std::any_of(r.adapter.begin(), r.adapter.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      throw Bad{ErrorCode::kBadRequest, "adapter: control characters are not allowed"};
    }
  }
  if (r.op == Op::kSince) {
    if (!req.contains("seq")) throw Bad{ErrorCode::kBadRequest, "seq: missing"};
    if (!req["seq"].is_number_unsigned()) {
      throw Bad{ErrorCode::kBadRequest, "seq: expected an unsigned integer"};
    }
    r.seq = req["seq"].get<uint64_t>();
    if (req.contains("stream")) {
      if (!req["stream"].is_string())
        throw Bad{ErrorCode::kBadRequest, "stream: expected a string"};
      r.stream = req["stream"].get<std::string>();
    }
  }
}

void write_id(JsonWriter& w, std::string_view id) {
  if (id.empty()) return;
  w.key("id");
  w.raw(id);
}

void write_filter_fields(JsonWriter& w, const Filter& f) {
  const auto text = [](const auto& pattern) { return pattern.text(); };
  if (!f.events.empty()) write_array(w, "events", f.events, event_name);
  if (!f.devices.empty()) write_array(w, "devices", f.devices, text);
  if (!f.ports.empty()) write_array(w, "ports", f.ports, text);
  if (f.min_severity) w.field("min_severity", severity_name(*f.min_severity));
}

void write_report_fields(JsonWriter& w, const Report& rep) {
  const ReportableEvent* e = reportable_event(rep.event_type);
  if (e) {
    w.field("event", e->name);
  } else {
    w.field("event", rep.event_type);  // the daemon refuses it, and says why
  }
  w.field("device", rep.device);
  if (rep.port != 0) w.field("port", rep.port);
  if (e && rep.object_id >= 0) w.field(e->key, rep.object_id);
  if (!rep.detail.empty()) w.field("detail", rep.detail);
}

}  // namespace

std::optional<Filter> filter_from_json(const json& obj, std::string* error) {
  try {
    return parse_filter(obj);
  } catch (const Bad& b) {
    if (error) *error = b.message;
    return std::nullopt;
  }
}

// --- filters ----------------------------------------------------------------------------------

std::optional<DevicePattern> DevicePattern::parse(std::string_view text, std::string* error) {
  if (text.empty()) {
    if (error) *error = "empty device pattern";
    return std::nullopt;
  }
  DevicePattern p;
  p.text_ = std::string(text);
  const bool guid_shaped =
      text.size() == 19 ||
      (text.size() == 18 && (text.starts_with("0x") || text.starts_with("0X")));
  if (auto guid = guid_shaped ? parse_guid(text) : std::nullopt) p.node_guid_ = format_guid(*guid);
  // A pattern is read as fnmatch(3) reads it; one without its special characters (a backslash
  // escapes) is compared as it is, which is the same and cheaper.
  p.glob_ = p.node_guid_.empty() && text.find_first_of("*?[\\") != std::string_view::npos;
  return p;
}

bool DevicePattern::matches(std::string_view device, std::string_view node_guid) const {
  if (!node_guid_.empty()) return node_guid == node_guid_;
  if (glob_) return fnmatch(text_.c_str(), std::string(device).c_str(), 0) == 0;
  return device == text_;
}

std::optional<PortPattern> PortPattern::parse(std::string_view text, std::string* error) {
  const auto slash = text.rfind('/');
  if (slash == std::string_view::npos || slash == 0) {
    if (error) *error = "'" + std::string(text) + "': expected DEV/PORT, e.g. mlx5_0/1";
    return std::nullopt;
  }
  const std::string_view num = text.substr(slash + 1);
  uint32_t port = 0;
  bool ok = !num.empty() && num.size() <= 3;
  for (char c : num) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (!ok || port < 1 || port > 255) {
    if (error) *error = "'" + std::string(text) + "': the port must be a number from 1 to 255";
    return std::nullopt;
  }
  auto device = DevicePattern::parse(text.substr(0, slash), error);
  if (!device) return std::nullopt;
  return PortPattern{std::move(*device), port};
}

std::string PortPattern::text() const {
  return device.text() + "/" + std::to_string(port);
}

RecordKey key_of(const Record& r) {
  RecordKey key{r.event, r.severity, r.device, r.node_guid, r.port, port_scoped(r)};
  if (r.event == EventKind::kDeviceRenamed) key.old_name = r.old_name;
  return key;
}

bool Filter::matches_patterns(const RecordKey& r) const {
  if (!events.empty() && std::find(events.begin(), events.end(), r.event) == events.end()) {
    return false;
  }
  if (min_severity && r.severity < *min_severity) return false;
  // The record's device, under its name or, for a rename, the name it had.
  const auto names_device = [&](const DevicePattern& d) {
    return d.matches(r.device, r.node_guid) ||
           (!r.old_name.empty() && d.matches(r.old_name, r.node_guid));
  };
  if (!devices.empty() && std::none_of(devices.begin(), devices.end(), names_device)) {
    return false;
  }
  if (!ports.empty() && std::none_of(ports.begin(), ports.end(), [&](const PortPattern& p) {
        return names_device(p.device) && (!r.port_scoped || r.port == p.port);
      })) {
    return false;
  }
  return true;
}

bool Filter::matches_port(std::string_view device, std::string_view node_guid,
                          uint32_t port) const {
  if (!devices.empty() && std::none_of(devices.begin(), devices.end(), [&](const DevicePattern& d) {
        return d.matches(device, node_guid);
      })) {
    return false;
  }
  return ports.empty() || std::any_of(ports.begin(), ports.end(), [&](const PortPattern& p) {
           return p.port == port && p.device.matches(device, node_guid);
         });
}

// --- names ------------------------------------------------------------------------------------

const ReportableEvent* reportable_event(int type) {
  for (const auto& e : kReportable) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

const ReportableEvent* reportable_event(std::string_view name) {
  for (const auto& e : kReportable) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string_view op_name(Op op) {
  return kOpNames[static_cast<size_t>(op)];
}

std::optional<Op> op_from_name(std::string_view name) {
  return internal::enum_from_name<Op>(kOpNames, name);
}

std::string_view error_code_name(ErrorCode code) {
  return kErrorNames[static_cast<size_t>(code)];
}

std::optional<ErrorCode> error_code_from_name(std::string_view name) {
  return internal::enum_from_name<ErrorCode>(kErrorNames, name);
}

std::string report_socket_path(std::string_view events_socket_path) {
  return std::string(events_socket_path) + std::string(kReportSocketSuffix);
}

std::string_view message_kind_name(MessageKind kind) {
  return kMessageKindNames[static_cast<size_t>(kind)];
}

// --- requests ---------------------------------------------------------------------------------

std::variant<Request, RequestError> parse_request(std::string_view line) {
  json req;
  try {
    req = json::parse(line);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double ("1e400"): the
    // parser throws both for bad input, and neither may escape.
    return RequestError{ErrorCode::kInvalidJson, invalid_json_message(e.what()), "", ""};
  }
  if (!req.is_object()) {
    return RequestError{ErrorCode::kBadRequest, "a request is a JSON object", "", ""};
  }
  Request r;
  RequestError err;
  if (req.contains("id")) {
    const json& id = req["id"];
    const bool ok = id.is_number_integer() ||
                    (id.is_string() && id.get_ref<const std::string&>().size() <= kMaxIdChars);
    if (!ok) {
      return RequestError{ErrorCode::kBadRequest,
                          "id: expected an integer or a string of at most " +
                              std::to_string(kMaxIdChars) + " characters",
                          "", ""};
    }
    r.id = err.id = id.dump();
  }
  if (!req.contains("op")) {
    err.code = ErrorCode::kBadRequest;
    err.message = "op: missing (" + name_list(kOpNames) + ")";
    return err;
  }
  if (!req["op"].is_string()) {
    err.code = ErrorCode::kBadRequest;
    err.message = "op: expected a string";
    return err;
  }
  const std::string op = req["op"].get<std::string>();
  auto parsed_op = op_from_name(op);
  if (!parsed_op) {
    err.code = ErrorCode::kUnknownOp;
    err.message = "unknown op '" + op + "' (" + name_list(kOpNames) + ")";
    return err;
  }
  r.op = *parsed_op;
  err.op = op;
  try {
    parse_body(req, r);
  } catch (const Bad& b) {
    err.code = b.code;
    err.message = b.message;
    return err;
  }
  return r;
}

namespace {

// A JSON object: `fields` writes its members between the braces.
template <typename Fields>
std::string object_json(const Fields& fields) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  fields(w);
  w.end_object();
  return out;
}

// A line from the daemon: {"type":TYPE, then the members `fields` writes}.
template <typename Fields>
std::string daemon_line_json(std::string_view type, const Fields& fields) {
  return object_json([&](JsonWriter& w) {
    w.field("type", type);
    fields(w);
  });
}

}  // namespace

std::string request_json(const Request& r) {
  return object_json([&](JsonWriter& w) {
    w.field("op", op_name(r.op));
    write_id(w, r.id);
    if (r.op == Op::kSubscribe) write_filter_fields(w, r.filter);
    if (r.op == Op::kSince) {
      w.field("seq", r.seq);
      if (!r.stream.empty()) w.field("stream", r.stream);
    }
    if (r.op == Op::kReport) write_report_fields(w, r.report);
    if (r.op == Op::kRetire) w.field("adapter", r.adapter);
  });
}

std::string filter_json(const Filter& f) {
  return object_json([&](JsonWriter& w) { write_filter_fields(w, f); });
}

// --- lines from the daemon --------------------------------------------------------------------

std::string hello_json(const Hello& h) {
  return daemon_line_json("hello", [&](JsonWriter& w) {
    w.field("protocol", h.protocol);
    w.field("version", h.version);
    w.field("stream", h.stream);
    w.field("host", h.host);
    w.field("seq", h.seq);
    if (h.reporter != 0) {
      w.field("reporter", h.reporter);
    } else {
      w.field("subscriber", h.subscriber);
    }
    w.field("max_request_bytes", h.max_request_bytes);
  });
}

std::string lost_json(const Lost& l) {
  return daemon_line_json("lost", [&](JsonWriter& w) {
    w.field("first_seq", l.first_seq);
    w.field("last_seq", l.last_seq);
    w.field("records", l.records);
  });
}

std::string error_json(const RequestError& e) {
  return daemon_line_json("error", [&](JsonWriter& w) {
    if (!e.op.empty()) w.field("op", e.op);
    write_id(w, e.id);
    w.field("error", error_code_name(e.code));
    w.field("message", e.message);
  });
}

}  // namespace rdma_eventd
