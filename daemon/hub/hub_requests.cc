// The hub's answers to requests: subscribe, snapshot, since, status, ping, health
// (docs/protocol.md); on the report socket, only ping (and report, hub_reports.cc).
// Each is handled within one loop callback, so the daemon's state cannot move while an answer
// is built: a snapshot taken at seq N is followed, on the same connection, by the records from
// N + 1 on, with no gap and no duplicate.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "core/clock.h"
#include "hub/hub.h"
#include "hub/subscriber.h"

namespace rdma_eventd::daemon {
namespace {

using LinePtr = OutputQueue::LinePtr;

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
    if (e->op == op_name(Op::kReport)) ++report_stats_.invalid;
    queue_error(s, *e);
    return;
  }
  handle_request(s, std::get<Request>(parsed));
}

void SubscriberHub::queue_error(Subscriber& s, const RequestError& e) {
  ++(s.reporter() ? reporter_totals_.request_errors : totals_.request_errors);
  spdlog::debug("{} {} (pid {}): {}: {}", s.kind(), s.id, s.pid, error_code_name(e.code),
                e.message);
  s.out.push_control(shared(error_json(e) + "\n"));
}

std::optional<RequestError> SubscriberHub::reporter_refusal(const Subscriber& s,
                                                            const Request& r) const {
  // A reporter's connection carries reports and their replies, nothing that sends records
  // (subscribe, snapshot, since) or grows with the daemon (status, health): those belong to the
  // events socket, with its own limits.
  if (!s.reporter() || r.op == Op::kReport || r.op == Op::kPing) return std::nullopt;
  return RequestError{ErrorCode::kReportsOnly,
                      "the report socket takes report and ping; " + std::string(op_name(r.op)) +
                          " is a request for the events socket, " + listener_.path(),
                      r.id, std::string(op_name(r.op))};
}

void SubscriberHub::handle_request(Subscriber& s, const Request& r) {
  if (auto refused = reporter_refusal(s, r)) {
    queue_error(s, *refused);
    return;
  }
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
    case Op::kReport:
      handle_report(s, r);
      return;
    case Op::kHealth: {
      const HealthReply health = state_.health();
      s.out.push_control(
          shared(reply_line(r.op, r, seq, [&](JsonWriter& w) { write_health(w, health); })));
      return;
    }
    case Op::kInventory: {
      const InventoryReply inventory = state_.inventory();
      s.out.push_control(
          shared(reply_line(r.op, r, seq, [&](JsonWriter& w) { write_inventory(w, inventory); })));
      return;
    }
    case Op::kRetire:
      reply_retire(s, r);
      return;
  }
}

// Only root takes an adapter out of what the host is expected to have: anyone else who may
// read the events would otherwise be able to hide a missing adapter from every client.
void SubscriberHub::reply_retire(Subscriber& s, const Request& r) {
  if (s.uid != 0) {
    queue_error(s, RequestError{ErrorCode::kNotPermitted,
                                "only root may retire an adapter (this peer's uid is " +
                                    std::to_string(s.uid) + "); nothing changed",
                                r.id, std::string(op_name(r.op))});
    return;
  }
  InventoryReply::Adapter retired;
  const std::string error = state_.retire(r.adapter, static_cast<uint32_t>(s.uid), retired);
  if (!error.empty()) {
    queue_error(s, RequestError{ErrorCode::kUnknownAdapter, error + "; nothing changed", r.id,
                                std::string(op_name(r.op))});
    return;
  }
  // After the retire: its records (if any verdict changed) went out first, with their seqs.
  s.out.push_control(shared(
      reply_line(r.op, r, state_.last_seq(), [&](JsonWriter& w) { write_retired(w, retired); })));
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
    w.field("records", records.size());
  })));
  for (auto& line : records)
    s.out.push_control(std::move(line));
}

std::string SubscriberHub::status_reply(const Subscriber& self, const Request& r) const {
  StatusReply status = state_.status();
  status.ring = ring_status();
  status.subscribers = subscribers_status(self);
  status.reports = report_stats_;
  status.reports.max_per_second = reports_config_.max_per_second;
  status.reporters = reporters_status();
  return reply_line(r.op, r, state_.last_seq(), [&](JsonWriter& w) { write_status(w, status); });
}

StatusReply::Ring SubscriberHub::ring_status() const {
  return StatusReply::Ring{ring_.capacity(), ring_.size(), ring_.first_seq(), ring_.last_seq()};
}

StatusReply::Subscribers SubscriberHub::subscribers_status(const Subscriber& self) const {
  const HubStats h = stats();
  StatusReply::Subscribers out{
      .count = h.subscribers,
      .max = config_.max_subscribers,
      .accepted = h.accepted,
      .refused = h.refused,
      .refused_max_subscribers = h.refused_full,
      .refused_max_subscribers_per_user = h.refused_user_full,
      .refused_access = h.refused_access,
      .rate_limited = h.rate_limited,
      .records_sent = h.records_sent,
      .records_lost = h.records_lost,
      .lost_notices = h.lost_notices,
      .bytes_queued = h.bytes_queued,
      .request_errors = h.request_errors,
      .max_queued_bytes = config_.max_queued_bytes,
      .max_request_bytes = config_.max_request_bytes,
      .max_subscribers_per_user = config_.max_subscribers_per_user,
      .max_filters = config_.max_filters,
      .max_requests_per_second = config_.max_requests_per_second,
  };
  for (const auto& [id, ptr] : subscribers_) {
    const Subscriber& s = *ptr;
    if (s.slot_released || s.reporter()) continue;  // closing, or not a subscriber
    const OutputQueue::Stats& st = s.out.stats();
    out.list.push_back(StatusReply::Subscriber{
        .id = s.id,
        .self = &s == &self,
        .pid = s.pid,
        .uid = s.uid,
        .connected_us = s.connected_us,
        .requests = s.requests,
        .rate_limited = s.rate_limited,
        .records_sent = st.records_sent,
        .records_lost = st.records_lost,
        .lost_notices = st.lost_notices,
        .bytes_queued = s.out.bytes(),
        .bytes_sent = st.bytes_sent,
        .replaying = s.replay_next.has_value(),
        .filter = s.filter,
    });
  }
  return out;
}

StatusReply::Reporters SubscriberHub::reporters_status() const {
  const ReporterStats r = reporter_stats();
  StatusReply::Reporters out{
      .socket = report_listener_ ? report_listener_->path() : std::string(),
      .count = r.reporters,
      .max = reports_config_.max_reporters,
      .max_per_user = reports_config_.max_reporters_per_user,
      .accepted = r.accepted,
      .refused = r.refused,
      .refused_max_reporters = r.refused_full,
      .refused_max_reporters_per_user = r.refused_user_full,
      .refused_access = r.refused_access,
      .rate_limited = r.rate_limited,
      .request_errors = r.request_errors,
  };
  for (const auto& [id, ptr] : subscribers_) {
    const Subscriber& s = *ptr;
    if (s.slot_released || !s.reporter()) continue;
    out.list.push_back(StatusReply::Reporter{
        .id = s.id,
        .pid = s.pid,
        .uid = s.uid,
        .connected_us = s.connected_us,
        .requests = s.requests,
        .rate_limited = s.rate_limited,
        .bytes_queued = s.out.bytes(),
        .bytes_sent = s.out.stats().bytes_sent,
    });
  }
  return out;
}

}  // namespace rdma_eventd::daemon
