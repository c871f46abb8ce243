// The hub's answers to requests: subscribe, snapshot, since, status, ping (docs/protocol.md).
// Each is handled within one loop callback, so the daemon's state cannot move while an answer
// is built: a snapshot taken at seq N is followed, on the same connection, by the records from
// N + 1 on, with no gap and no duplicate.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "core/clock.h"
#include "hub/hub.h"
#include "hub/subscriber.h"
#include "rdma_eventd/json_writer.h"

namespace rdma_eventd::daemon {
namespace {

using LinePtr = OutputQueue::LinePtr;

// {"type":"reply","op":OP,"id":ID,"seq":SEQ, ...fields...}\n
std::string reply_line(Op op, const Request& r, uint64_t seq,
                       const std::function<void(JsonWriter&)>& fields) {
  std::string out;
  out.reserve(128);
  JsonWriter w(out);
  w.begin_object();
  w.field("type", "reply");
  w.field("op", op_name(op));
  if (!r.id.empty()) {
    w.key("id");
    w.raw(r.id);
  }
  w.field("seq", seq);
  if (fields) fields(w);
  w.end_object();
  out += '\n';
  return out;
}

LinePtr shared(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

std::vector<PkeyEntry> pkey_entries(const std::vector<uint16_t>& table) {
  std::vector<PkeyEntry> out;
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] != 0) out.push_back(PkeyEntry{static_cast<uint32_t>(i), table[i]});
  }
  return out;
}

}  // namespace

void SubscriberHub::handle_line(Subscriber& s, std::string_view line) {
  ++s.requests;
  auto parsed = parse_request(line);
  // Parsed first so that the refusal can echo the request's id and op: a client that pipelines
  // requests can tell which ones were not executed.
  if (!s.request_budget.take(clock_us_)) {
    ++s.rate_limited;
    RequestError e{ErrorCode::kRateLimited,
                   "over socket.max_requests_per_second (" +
                       std::to_string(config_.max_requests_per_second) +
                       "); the request was not executed",
                   "", ""};
    if (auto* r = std::get_if<Request>(&parsed)) {
      e.id = r->id;
      e.op = std::string(op_name(r->op));
    } else {
      e.id = std::get<RequestError>(parsed).id;
      e.op = std::get<RequestError>(parsed).op;
    }
    queue_error(s, e);
    return;
  }
  if (auto* e = std::get_if<RequestError>(&parsed)) {
    queue_error(s, *e);
    return;
  }
  handle_request(s, std::get<Request>(parsed));
}

void SubscriberHub::queue_error(Subscriber& s, const RequestError& e) {
  ++totals_.request_errors;
  spdlog::debug("subscriber {} (pid {}): {}: {}", s.id, s.pid, error_code_name(e.code), e.message);
  s.out.push_control(shared(error_json(e) + "\n"));
}

void SubscriberHub::handle_request(Subscriber& s, const Request& r) {
  const uint64_t seq = state_.last_seq();
  switch (r.op) {
    case Op::kPing:
      s.out.push_control(shared(reply_line(r.op, r, seq, nullptr)));
      return;
    case Op::kSubscribe: {
      // Every record is matched against every subscriber's filter: its size is bounded.
      const size_t entries =
          r.filter.events.size() + r.filter.devices.size() + r.filter.ports.size();
      if (entries > config_.max_filters) {
        queue_error(s, RequestError{ErrorCode::kTooManyFilters,
                                    "events, devices and ports have " + std::to_string(entries) +
                                        " entries together; socket.max_filters is " +
                                        std::to_string(config_.max_filters),
                                    r.id, std::string(op_name(r.op))});
        return;
      }
      s.filter = r.filter;
      s.out.push_control(shared(reply_line(r.op, r, seq, [&](JsonWriter& w) {
        w.key("filter");
        w.raw(filter_json(s.filter));
      })));
      return;
    }
    case Op::kSnapshot:
      s.replay_next.reset();  // the snapshot replaces whatever a replay still had to send
      queue_snapshot(s, r, nullptr);
      return;
    case Op::kSince:
      reply_since(s, r);
      return;
    case Op::kStatus:
      s.out.push_control(shared(status_reply(s, r)));
      return;
  }
}

void SubscriberHub::reply_since(Subscriber& s, const Request& r) {
  const uint64_t seq = state_.last_seq();
  std::string_view reason;
  if (!r.stream.empty() && r.stream != identity_.stream) {
    reason = "stream";  // another daemon run: its seqs mean nothing here
  } else if (r.seq > seq) {
    reason = "future";
  } else if (r.seq < seq && (ring_.empty() || ring_.first_seq() > r.seq + 1)) {
    reason = "evicted";
  }
  if (reason.empty()) {
    s.out.push_control(shared(reply_line(r.op, r, seq, [&](JsonWriter& w) {
      w.field("covered", true);
      w.field("first_seq", r.seq + 1);
      w.field("last_seq", seq);
    })));
    s.replay_next.reset();
    if (r.seq < seq) s.replay_next = r.seq + 1;
    return;
  }
  s.replay_next.reset();
  queue_snapshot(s, r, [&](JsonWriter& w) {
    w.field("covered", false);
    w.field("reason", reason);
    w.field("ring_first_seq", ring_.first_seq());
  });
}

void SubscriberHub::queue_snapshot(Subscriber& s, const Request& r,
                                   const std::function<void(JsonWriter&)>& reply_fields) {
  const uint64_t seq = state_.last_seq();
  const int64_t now = realtime_us();
  std::vector<LinePtr> records;
  for (const DeviceView* d : state_.device_views()) {
    const std::string guid = format_guid(d->node_guid);
    for (uint32_t p = 1; p <= d->num_ports(); ++p) {
      if (!s.filter.matches_port(d->name, guid, p)) continue;
      const PortView& pv = d->ports[p - 1];
      PortSnapshot snap{seq,  identity_.stream, now,     identity_.host,        d->name,
                        guid, pv.info,          pv.gids, pkey_entries(pv.pkeys)};
      snap.port.port = p;
      records.push_back(shared(to_json(snap) + "\n"));
    }
  }
  s.out.push_control(shared(reply_line(r.op, r, seq, [&](JsonWriter& w) {
    if (reply_fields) reply_fields(w);
    w.field("records", static_cast<uint64_t>(records.size()));
  })));
  for (auto& line : records)
    s.out.push_control(std::move(line));
}

std::string SubscriberHub::status_reply(const Subscriber& self, const Request& r) const {
  const DaemonCounters c = state_.counters();
  const int64_t now = realtime_us();
  return reply_line(r.op, r, state_.last_seq(), [&](JsonWriter& w) {
    w.key("daemon");
    w.begin_object();
    w.field("version", std::string_view(identity_.version));
    w.field("protocol", kProtocolVersion);
    w.field("stream", std::string_view(identity_.stream));
    w.field("host", std::string_view(identity_.host));
    w.field("pid", static_cast<int64_t>(::getpid()));
    w.field("started", std::string_view(format_rfc3339_us(started_us_)));
    w.field("uptime_s", static_cast<uint64_t>((now - started_us_) / 1000000));
    w.end_object();
    w.key("counters");
    w.begin_object();
    w.field("events_read", c.events_read);
    w.field("events_acked", c.events_acked);
    w.field("records", c.records);
    w.field("batches", c.batches);
    w.field("query_failures", c.query_failures);
    w.field("resyncs", c.resyncs);
    w.field("devices_waiting", c.devices_waiting);
    w.end_object();
    w.key("hotplug");
    w.begin_object();
    w.field("source", c.udev ? "udev" : "rescan");
    w.field("udev_events", c.udev_events);
    w.field("udev_overflows", c.udev_overflows);
    w.end_object();
    w.key("journal");
    w.begin_object();
    w.field("enabled", c.journal_enabled);
    w.field("written", c.journal_written);
    w.field("failed", c.journal_failed);
    w.field("dropped", c.journal_dropped);
    w.field("queued", c.journal_queued);
    w.field("waits", c.journal_waits);
    w.field("stalls", c.journal_stalls);
    w.end_object();
    w.key("ring");
    w.begin_object();
    w.field("capacity", static_cast<uint64_t>(ring_.capacity()));
    w.field("records", static_cast<uint64_t>(ring_.size()));
    w.field("first_seq", ring_.first_seq());
    w.field("last_seq", ring_.last_seq());
    w.end_object();
    write_subscribers(w, self);
    write_devices(w);
  });
}

void SubscriberHub::write_subscribers(JsonWriter& w, const Subscriber& self) const {
  const HubStats h = stats();
  w.key("subscribers");
  w.begin_object();
  w.field("count", h.subscribers);
  w.field("max", static_cast<uint64_t>(config_.max_subscribers));
  w.field("accepted", h.accepted);
  w.field("refused", h.refused);
  w.key("refused_by");
  w.begin_object();
  w.field("max_subscribers", h.refused_full);
  w.field("max_subscribers_per_user", h.refused_user_full);
  w.field("access", h.refused_access);
  w.end_object();
  w.field("rate_limited", h.rate_limited);
  w.field("records_sent", h.records_sent);
  w.field("records_lost", h.records_lost);
  w.field("lost_notices", h.lost_notices);
  w.field("bytes_queued", h.bytes_queued);
  w.field("request_errors", h.request_errors);
  w.field("max_queued_bytes", config_.max_queued_bytes);
  w.field("max_request_bytes", static_cast<uint64_t>(config_.max_request_bytes));
  w.field("max_subscribers_per_user", static_cast<uint64_t>(config_.max_subscribers_per_user));
  w.field("max_filters", static_cast<uint64_t>(config_.max_filters));
  w.field("max_requests_per_second", static_cast<uint64_t>(config_.max_requests_per_second));
  w.key("list");
  w.begin_array();
  for (const auto& [id, ptr] : subscribers_) {
    const Subscriber& s = *ptr;
    if (s.slot_released) continue;  // closing: not counted, not listed
    const OutputQueue::Stats& st = s.out.stats();
    w.begin_object();
    w.field("id", s.id);
    w.field("self", &s == &self);
    w.field("pid", static_cast<int64_t>(s.pid));
    w.field("uid", static_cast<uint64_t>(s.uid));
    w.field("connected", std::string_view(format_rfc3339_us(s.connected_us)));
    w.field("requests", s.requests);
    w.field("rate_limited", s.rate_limited);
    w.field("records_sent", st.records_sent);
    w.field("records_lost", st.records_lost);
    w.field("lost_notices", st.lost_notices);
    w.field("bytes_queued", static_cast<uint64_t>(s.out.bytes()));
    w.field("bytes_sent", st.bytes_sent);
    w.field("replaying", s.replay_next.has_value());
    w.key("filter");
    w.raw(filter_json(s.filter));
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void SubscriberHub::write_devices(JsonWriter& w) const {
  w.key("devices");
  w.begin_array();
  for (const DeviceView* d : state_.device_views()) {
    w.begin_object();
    w.field("device", std::string_view(d->name));
    w.field("node_guid", std::string_view(format_guid(d->node_guid)));
    w.key("ports");
    w.begin_array();
    for (uint32_t p = 1; p <= d->num_ports(); ++p) {
      const PortView& pv = d->ports[p - 1];
      w.begin_object();
      w.field("port", p);
      write_port_fields(w, pv.info);
      w.field("gids", static_cast<uint64_t>(pv.gids.size()));
      w.field("pkeys", static_cast<uint64_t>(pkey_entries(pv.pkeys).size()));
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

}  // namespace rdma_eventd::daemon
