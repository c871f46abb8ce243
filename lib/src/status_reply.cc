// The status reply's blocks, each described once by a table of its fields (field_table.h),
// which drives both writing and reading, so that the two cannot disagree. What a table
// cannot say (the hot-plug source, "refused_by", the lists of subscribers and their filters and
// of reporters, the devices with their port blocks) is written and read next to it.
#include "schema/status_reply.h"

#include <nlohmann/json.hpp>

#include "field_table.h"
#include "json_reader.h"
#include "schema/protocol_json.h"
#include "schema/record_json.h"
#include "status_event_counts.h"

namespace rdma_eventd {
namespace {

using nlohmann::json;
using Status = StatusReply;

const Fields<Status::Daemon, 7> kDaemonFields = {{
    {"version", &Status::Daemon::version},
    {"protocol", &Status::Daemon::protocol},
    {"stream", &Status::Daemon::stream},
    {"host", &Status::Daemon::host},
    {"pid", &Status::Daemon::pid},
    {"started", TimeMember<Status::Daemon>{&Status::Daemon::started_us}},
    {"uptime_s", &Status::Daemon::uptime_s},
}};

const Fields<Status::Counters, 7> kCounterFields = {{
    {"events_read", &Status::Counters::events_read},
    {"events_acked", &Status::Counters::events_acked},
    {"records", &Status::Counters::records},
    {"batches", &Status::Counters::batches},
    {"query_failures", &Status::Counters::query_failures},
    {"resyncs", &Status::Counters::resyncs},
    {"devices_waiting", &Status::Counters::devices_waiting},
}};

// After "source".
const Fields<Status::Hotplug, 2> kHotplugFields = {{
    {"udev_events", &Status::Hotplug::udev_events},
    {"udev_overflows", &Status::Hotplug::udev_overflows},
}};
// Absent from daemons that predate the RDMA netlink monitor.
const Fields<Status::Hotplug, 2> kHotplugNetlinkFields = {{
    {"netlink_events", &Status::Hotplug::netlink_events},
    {"netlink_overruns", &Status::Hotplug::netlink_overruns},
}};
// Absent from daemons that predate the rescan beside the monitor (then "rescan_for" too).
const Fields<Status::Hotplug, 1> kHotplugRescanFields = {{
    {"rescanning", &Status::Hotplug::rescanning},
}};

const Fields<Status::Journal, 10> kJournalFields = {{
    {"enabled", &Status::Journal::enabled},
    {"written", &Status::Journal::written},
    {"failed", &Status::Journal::failed},
    {"dropped", &Status::Journal::dropped},
    {"queued", &Status::Journal::queued},
    {"waits", &Status::Journal::waits},
    {"stalls", &Status::Journal::stalls},
    {"budget", &Status::Journal::budget},
    {"not_journaled", &Status::Journal::not_journaled},
    {"summaries", &Status::Journal::summaries},
}};

const Fields<Status::Reports, 5> kReportsFields = {{
    {"accepted", &Status::Reports::accepted},
    {"denied", &Status::Reports::denied},
    {"rate_limited", &Status::Reports::rate_limited},
    {"invalid", &Status::Reports::invalid},
    {"max_per_second", &Status::Reports::max_per_second},
}};

const Fields<Status::Ring, 4> kRingFields = {{
    {"capacity", &Status::Ring::capacity},
    {"records", &Status::Ring::records},
    {"first_seq", &Status::Ring::first_seq},
    {"last_seq", &Status::Ring::last_seq},
}};

// Before "refused_by".
const Fields<Status::Subscribers, 4> kSubscribersHead = {{
    {"count", &Status::Subscribers::count},
    {"max", &Status::Subscribers::max},
    {"accepted", &Status::Subscribers::accepted},
    {"refused", &Status::Subscribers::refused},
}};

// "refused_by": {...}
const Fields<Status::Subscribers, 3> kRefusedBy = {{
    {"max_subscribers", &Status::Subscribers::refused_max_subscribers},
    {"max_subscribers_per_user", &Status::Subscribers::refused_max_subscribers_per_user},
    {"access", &Status::Subscribers::refused_access},
}};

// After "refused_by", before "list".
const Fields<Status::Subscribers, 11> kSubscribersTail = {{
    {"rate_limited", &Status::Subscribers::rate_limited},
    {"records_sent", &Status::Subscribers::records_sent},
    {"records_lost", &Status::Subscribers::records_lost},
    {"lost_notices", &Status::Subscribers::lost_notices},
    {"bytes_queued", &Status::Subscribers::bytes_queued},
    {"request_errors", &Status::Subscribers::request_errors},
    {"max_queued_bytes", &Status::Subscribers::max_queued_bytes},
    {"max_request_bytes", &Status::Subscribers::max_request_bytes},
    {"max_subscribers_per_user", &Status::Subscribers::max_subscribers_per_user},
    {"max_filters", &Status::Subscribers::max_filters},
    {"max_requests_per_second", &Status::Subscribers::max_requests_per_second},
}};

// Before "filter".
const Fields<Status::Subscriber, 13> kSubscriberFields = {{
    {"id", &Status::Subscriber::id},
    {"self", &Status::Subscriber::self},
    {"pid", &Status::Subscriber::pid},
    {"uid", &Status::Subscriber::uid},
    {"connected", TimeMember<Status::Subscriber>{&Status::Subscriber::connected_us}},
    {"requests", &Status::Subscriber::requests},
    {"rate_limited", &Status::Subscriber::rate_limited},
    {"records_sent", &Status::Subscriber::records_sent},
    {"records_lost", &Status::Subscriber::records_lost},
    {"lost_notices", &Status::Subscriber::lost_notices},
    {"bytes_queued", &Status::Subscriber::bytes_queued},
    {"bytes_sent", &Status::Subscriber::bytes_sent},
    {"replaying", &Status::Subscriber::replaying},
}};

// Before "refused_by".
const Fields<Status::Reporters, 6> kReportersHead = {{
    {"socket", &Status::Reporters::socket},
    {"count", &Status::Reporters::count},
    {"max", &Status::Reporters::max},
    {"max_per_user", &Status::Reporters::max_per_user},
    {"accepted", &Status::Reporters::accepted},
    {"refused", &Status::Reporters::refused},
}};

// "refused_by": {...}
const Fields<Status::Reporters, 3> kReportersRefusedBy = {{
    {"max_reporters", &Status::Reporters::refused_max_reporters},
    {"max_reporters_per_user", &Status::Reporters::refused_max_reporters_per_user},
    {"access", &Status::Reporters::refused_access},
}};

// After "refused_by", before "list".
const Fields<Status::Reporters, 2> kReportersTail = {{
    {"rate_limited", &Status::Reporters::rate_limited},
    {"request_errors", &Status::Reporters::request_errors},
}};

const Fields<Status::Reporter, 8> kReporterFields = {{
    {"id", &Status::Reporter::id},
    {"pid", &Status::Reporter::pid},
    {"uid", &Status::Reporter::uid},
    {"connected", TimeMember<Status::Reporter>{&Status::Reporter::connected_us}},
    {"requests", &Status::Reporter::requests},
    {"rate_limited", &Status::Reporter::rate_limited},
    {"bytes_queued", &Status::Reporter::bytes_queued},
    {"bytes_sent", &Status::Reporter::bytes_sent},
}};

void write_subscribers(JsonWriter& w, const Status::Subscribers& s) {
  w.key("subscribers");
  w.begin_object();
  write_fields(w, s, kSubscribersHead);
  write_object(w, "refused_by", s, kRefusedBy);
  write_fields(w, s, kSubscribersTail);
  write_object_array(w, "list", s.list, [&](const Status::Subscriber& one) {
    write_fields(w, one, kSubscriberFields);
    w.key("filter");
    w.raw(filter_json(one.filter));
  });
  w.end_object();
}

void write_reporters(JsonWriter& w, const Status::Reporters& r) {
  w.key("reporters");
  w.begin_object();
  write_fields(w, r, kReportersHead);
  write_object(w, "refused_by", r, kReportersRefusedBy);
  write_fields(w, r, kReportersTail);
  write_object_array(w, "list", r.list,
                     [&](const Status::Reporter& one) { write_fields(w, one, kReporterFields); });
  w.end_object();
}

const Fields<Status::LinkHealth, 5> kLinkHealthFields = {{
    {"enabled", &Status::LinkHealth::enabled},
    {"interval_s", &Status::LinkHealth::interval_s},
    {"samples", &Status::LinkHealth::samples},
    {"counter_reads", &Status::LinkHealth::counter_reads},
    {"read_failures", &Status::LinkHealth::read_failures},
}};
// Absent from daemons that gave up on every failed read.
const Fields<Status::LinkHealth, 1> kLinkHealthRetryFields = {{
    {"read_retries", &Status::LinkHealth::read_retries},
}};
// Absent from daemons that read counters on their loop.
const Fields<Status::LinkHealth, 2> kLinkHealthWorkerFields = {{
    {"reads_hung", &Status::LinkHealth::reads_hung},
    {"reads_in_flight", &Status::LinkHealth::reads_in_flight},
}};
// Absent from daemons that had no unknown state.
const Fields<Status::LinkPort, 3> kLinkPortQualityFields = {{
    {"quality", &Status::LinkPort::quality},
    {"unknown", &Status::LinkPort::unknown},
    {"since", TimeMember<Status::LinkPort>{&Status::LinkPort::since_us}},
}};

// Before "ber_estimate" and "pegged" (read in the other order) and "counters".
const Fields<Status::LinkPort, 4> kLinkPortFields = {{
    {"device", &Status::LinkPort::device},
    {"port", &Status::LinkPort::port},
    {"bad", &Status::LinkPort::bad},
    {"faults", &Status::LinkPort::faults},
}};

void write_link_health(JsonWriter& w, const Status::LinkHealth& l) {
  w.key("link_health");
  w.begin_object();
  write_fields(w, l, kLinkHealthFields);
  write_fields(w, l, kLinkHealthRetryFields);
  write_fields(w, l, kLinkHealthWorkerFields);
  write_object_array(w, "ports", l.ports, [&](const Status::LinkPort& p) {
    write_fields(w, p, kLinkPortFields);
    write_fields(w, p, kLinkPortQualityFields);
    w.key("ber_estimate");
    if (p.ber_estimate)
      w.value(*p.ber_estimate);
    else
      w.null();
    w.field("pegged", p.pegged);
    write_named_counts(w, "counters", p.counters);
  });
  w.end_object();
}

const Fields<Status::Devlink, 8> kDevlinkFields = {{
    {"enabled", &Status::Devlink::enabled},
    {"available", &Status::Devlink::available},
    {"unavailable", &Status::Devlink::unavailable},
    {"notifications", &Status::Devlink::notifications},
    {"dumps", &Status::Devlink::dumps},
    {"overruns", &Status::Devlink::overruns},
    {"malformed", &Status::Devlink::malformed},
    {"records", &Status::Devlink::records},
}};

// After "handle" and "port_index", before "ports".
const Fields<Status::DevlinkReporter, 5> kDevlinkReporterFields = {{
    {"reporter", &Status::DevlinkReporter::reporter},
    {"state", &Status::DevlinkReporter::state},
    {"error_count", &Status::DevlinkReporter::error_count},
    {"recover_count", &Status::DevlinkReporter::recover_count},
    {"since", TimeMember<Status::DevlinkReporter>{&Status::DevlinkReporter::since_us}},
}};

void write_devlink(JsonWriter& w, const Status::Devlink& d) {
  w.key("devlink");
  w.begin_object();
  write_fields(w, d, kDevlinkFields);
  write_object_array(w, "reporters", d.reporters, [&](const Status::DevlinkReporter& r) {
    w.field("handle", r.handle);
    write_or_null(w, "port_index", r.port_index >= 0, r.port_index);
    write_fields(w, r, kDevlinkReporterFields);
    write_array(w, "ports", r.ports);
  });
  write_object_array(w, "devlink_ports", d.devlink_ports, [&](const Status::DevlinkPort& p) {
    w.field("handle", p.handle);
    w.field("index", p.index);
    w.field("netdev", p.netdev);
  });
  w.end_object();
}

const Fields<Status::Devx, 5> kDevxFields = {{
    {"state", &Status::Devx::state},
    {"events", &Status::Devx::events},
    {"reason", &Status::Devx::reason},
    {"events_read", &Status::Devx::events_read},
    {"events_lost", &Status::Devx::events_lost},
}};

void write_devices(JsonWriter& w, const std::vector<Status::Device>& devices) {
  write_object_array(w, "devices", devices, [&](const Status::Device& d) {
    w.field("device", d.device);
    w.field("node_guid", d.node_guid);
    write_object_array(w, "ports", d.ports, [&](const Status::Port& p) {
      w.field("port", p.info.port);
      write_port_block(w, p.info);
      w.field("gids", p.gids);
      w.field("pkeys", p.pkeys);
    });
    write_object(w, "devx", d.devx, kDevxFields);
  });
}

// --- reading -----------------------------------------------------------------------------------

bool read_hotplug(JsonReader& rd, const json& o, Status::Hotplug& h) {
  if (!rd.str(o, "source", h.source) || !read_fields(rd, o, h, kHotplugFields)) return false;
  if (h.source != "rdma_netlink" && h.source != "udev" && h.source != "rescan") {
    return rd.fail("source", "'" + h.source + "' is none of rdma_netlink, udev, rescan");
  }
  if (o.contains("netlink_events") && !read_fields(rd, o, h, kHotplugNetlinkFields)) return false;
  if (!o.contains("rescanning")) {
    h.rescanning = h.source != "udev";
    return true;
  }
  return read_fields(rd, o, h, kHotplugRescanFields) && rd.strings(o, "rescan_for", h.rescan_for);
}

bool read_subscriber(JsonReader& rd, const json& o, Status::Subscriber& s) {
  const json* filter = nullptr;
  if (!read_fields(rd, o, s, kSubscriberFields) || !(filter = rd.object_at(o, "filter"))) {
    return false;
  }
  std::string why;
  auto f = filter_from_json(*filter, &why);
  if (!f) return rd.fail("filter", why);
  s.filter = std::move(*f);
  return true;
}

bool read_subscribers(JsonReader& rd, const json& o, Status::Subscribers& s) {
  const json* by = nullptr;
  return read_fields(rd, o, s, kSubscribersHead) && (by = rd.object_at(o, "refused_by")) &&
         read_fields(rd, *by, s, kRefusedBy) && read_fields(rd, o, s, kSubscribersTail) &&
         rd.entries(o, "list", s.list, [&](const json& item, Status::Subscriber& one) {
           return read_subscriber(rd, item, one);
         });
}

bool read_reporters(JsonReader& rd, const json& o, Status::Reporters& r) {
  const json* by = nullptr;
  return read_fields(rd, o, r, kReportersHead) && (by = rd.object_at(o, "refused_by")) &&
         read_fields(rd, *by, r, kReportersRefusedBy) && read_fields(rd, o, r, kReportersTail) &&
         rd.entries(o, "list", r.list, [&](const json& item, Status::Reporter& one) {
           return read_fields(rd, item, one, kReporterFields);
         });
}

// ber_estimate: a number, or null where it is not known.
bool read_ber_estimate(JsonReader& rd, const json& o, std::optional<double>& out) {
  const json* v = rd.find(o, "ber_estimate");
  if (!v) return false;
  if (v->is_null()) {
    out.reset();
    return true;
  }
  double ber = 0;
  if (!rd.real(o, "ber_estimate", ber)) return false;
  out = ber;
  return true;
}

bool read_link_port(JsonReader& rd, const json& o, Status::LinkPort& p) {
  return read_fields(rd, o, p, kLinkPortFields) &&
         (!o.contains("quality") || read_fields(rd, o, p, kLinkPortQualityFields)) &&
         rd.str(o, "pegged", p.pegged) && read_ber_estimate(rd, o, p.ber_estimate) &&
         read_named_counts(rd, o, "counters", p.counters);
}

bool read_devx(JsonReader& rd, const json& device, Status::Devx& x) {
  const json* o = rd.object_at(device, "devx");
  return o && read_fields(rd, *o, x, kDevxFields);
}

bool read_device(JsonReader& rd, const json& o, Status::Device& d) {
  return rd.str(o, "device", d.device) && rd.str(o, "node_guid", d.node_guid) &&
         rd.entries(o, "ports", d.ports,
                    [&](const json& item, Status::Port& p) {
                      return rd.u32(item, "port", p.info.port) && rd.port_block(item, p.info, "") &&
                             rd.u64(item, "gids", p.gids) && rd.u64(item, "pkeys", p.pkeys);
                    }) &&
         read_devx(rd, o, d.devx);
}

// Reads `o` with `read`; an error inside it is named "WHERE.INNER_KEY".
template <typename Block, typename Read>
bool read_named(const json& o, const std::string& where, Block& out, Read read,
                std::string& error) {
  std::string inner_error;
  JsonReader inner(&inner_error);
  if (read(inner, o, out)) return true;
  error = where + "." + inner_error;
  return false;
}

// The object at `key` of the reply, read with `read`.
template <typename Block, typename Read>
bool read_block(const json& reply, std::string_view key, Block& out, Read read,
                std::string& error) {
  JsonReader outer(&error);
  const json* o = outer.object_at(reply, key);
  return o && read_named(*o, std::string(key), out, read, error);
}

template <typename Block, size_t N>
auto table_reader(const Fields<Block, N>& fields) {
  return
      [&fields](JsonReader& rd, const json& o, Block& b) { return read_fields(rd, o, b, fields); };
}

bool read_devices(const json& reply, std::vector<Status::Device>& out, std::string& error) {
  JsonReader rd(&error);
  const json* devices = rd.array_at(reply, "devices");
  if (!devices) return false;
  for (size_t i = 0; i < devices->size(); ++i) {
    const std::string where = "devices[" + std::to_string(i) + "]";
    if (!(*devices)[i].is_object()) return rd.fail(where, "not an object");
    Status::Device d;
    if (!read_named((*devices)[i], where, d, read_device, error)) return false;
    out.push_back(std::move(d));
  }
  return true;
}

// Optional: absent from an older daemon's reply.
bool read_link_health(const json& reply, Status::LinkHealth& l, std::string& error) {
  if (!reply.contains("link_health")) return true;
  JsonReader outer(&error);
  const json* o = outer.object_at(reply, "link_health");
  return o &&
         read_named(
             *o, "link_health", l,
             [](JsonReader& rd, const json& b, Status::LinkHealth& out) {
               return read_fields(rd, b, out, kLinkHealthFields) &&
                      (!b.contains("read_retries") ||
                       read_fields(rd, b, out, kLinkHealthRetryFields)) &&
                      (!b.contains("reads_hung") ||
                       read_fields(rd, b, out, kLinkHealthWorkerFields)) &&
                      rd.entries(b, "ports", out.ports, [&](const json& item, Status::LinkPort& p) {
                        return read_link_port(rd, item, p);
                      });
             },
             error);
}

bool read_devlink_reporter(JsonReader& rd, const json& o, Status::DevlinkReporter& r) {
  const json* index = rd.find(o, "port_index");
  if (!index) return false;
  if (index->is_null()) {
    r.port_index = -1;
  } else {
    if (!rd.i64(o, "port_index", r.port_index)) return false;
    if (r.port_index < 0) return rd.fail("port_index", "neither a port number nor null");
  }
  return rd.str(o, "handle", r.handle) && read_fields(rd, o, r, kDevlinkReporterFields) &&
         rd.strings(o, "ports", r.ports);
}

// Optional: absent from an older daemon's reply.
bool read_devlink(const json& reply, Status::Devlink& d, std::string& error) {
  if (!reply.contains("devlink")) return true;
  JsonReader outer(&error);
  const json* o = outer.object_at(reply, "devlink");
  return o && read_named(
                  *o, "devlink", d,
                  [](JsonReader& rd, const json& b, Status::Devlink& out) {
                    return read_fields(rd, b, out, kDevlinkFields) &&
                           rd.entries(b, "reporters", out.reporters,
                                      [&](const json& item, Status::DevlinkReporter& r) {
                                        return read_devlink_reporter(rd, item, r);
                                      }) &&
                           // Absent from an older daemon's reply.
                           (!b.contains("devlink_ports") ||
                            rd.entries(b, "devlink_ports", out.devlink_ports,
                                       [&](const json& item, Status::DevlinkPort& p) {
                                         return rd.str(item, "handle", p.handle) &&
                                                rd.i64(item, "index", p.index) &&
                                                rd.str(item, "netdev", p.netdev);
                                       }));
                  },
                  error);
}

}  // namespace

void write_status(JsonWriter& w, const StatusReply& s) {
  write_object(w, "daemon", s.daemon, kDaemonFields);
  write_object(w, "counters", s.counters, kCounterFields);
  w.key("hotplug");
  w.begin_object();
  w.field("source", s.hotplug.source);
  write_fields(w, s.hotplug, kHotplugFields);
  write_fields(w, s.hotplug, kHotplugNetlinkFields);
  write_fields(w, s.hotplug, kHotplugRescanFields);
  w.key("rescan_for");
  w.begin_array();
  for (const std::string& name : s.hotplug.rescan_for)
    w.value(name);
  w.end_array();
  w.end_object();
  write_object(w, "journal", s.journal, kJournalFields);
  write_object(w, "ring", s.ring, kRingFields);
  write_subscribers(w, s.subscribers);
  write_devices(w, s.devices);
  write_object(w, "reports", s.reports, kReportsFields);
  write_event_counts(w, s.event_counts);
  write_reporters(w, s.reporters);
  write_link_health(w, s.link_health);
  write_devlink(w, s.devlink);
}

std::optional<StatusReply> status_from_json(std::string_view reply_line, std::string* error) {
  std::string why;
  JsonReader rd(&why);
  json reply;
  StatusReply s;
  const bool ok = rd.object(reply_line, "status reply", reply) &&
                  read_block(reply, "daemon", s.daemon, table_reader(kDaemonFields), why) &&
                  read_block(reply, "counters", s.counters, table_reader(kCounterFields), why) &&
                  read_block(reply, "hotplug", s.hotplug, read_hotplug, why) &&
                  read_block(reply, "journal", s.journal, table_reader(kJournalFields), why) &&
                  read_block(reply, "ring", s.ring, table_reader(kRingFields), why) &&
                  read_block(reply, "subscribers", s.subscribers, read_subscribers, why) &&
                  read_devices(reply, s.devices, why) &&
                  read_block(reply, "reports", s.reports, table_reader(kReportsFields), why) &&
                  read_block(reply, "event_counts", s.event_counts, read_event_counts, why) &&
                  read_block(reply, "reporters", s.reporters, read_reporters, why) &&
                  read_link_health(reply, s.link_health, why) &&
                  read_devlink(reply, s.devlink, why);
  if (ok) return s;
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace rdma_eventd
