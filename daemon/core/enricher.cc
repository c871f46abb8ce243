#include "core/enricher.h"

#include <algorithm>
#include <optional>

#include "core/table_diff.h"
#include "rdma_eventd/internal/same_text.h"

namespace rdma_eventd::daemon {

// A batch's working memory. These types are outside the anonymous namespace because
// EnrichScratch::Parts, which the header declares, holds them.

// What one batch needs to know, per port (index = port number; 0 unused).
struct QueryPlan {
  std::vector<uint8_t> port;   // bytes, not vector<bool>: assigned per batch, read per event
  std::vector<uint8_t> pkeys;  // empty when the batch has no P_Key change (most batches)
  bool gids = false;
  bool effective_speed = false;  // a DEVICE_SPEED_CHANGE: every port's effective speed
};

// Fresh answers for this batch. Only what was read is held: the tables of ports that were not
// queried (or whose query failed) stay in the view, uncopied.
struct Fresh {
  std::vector<PortInfo> info;  // index = port number; the cached state when not read
  std::optional<std::vector<std::vector<GidEntry>>> gids;  // per_port[p - 1], when read
  // Index = port number, when read; empty when the batch has no P_Key change.
  std::vector<std::optional<std::vector<uint16_t>>> pkeys;
  std::vector<EffectiveSpeed> effective_speed;  // port 1 first, when the plan asked for it
};

// One GID table change: an entry added (true) or removed (false).
using GidChange = std::pair<bool, GidEntry>;

struct GidWork {
  std::vector<GidChange> changes;
  size_t next = 0;
  uint32_t events_left = 0;
};

struct EnrichScratch::Parts {
  std::vector<DecodedEvent> decoded;
  QueryPlan plan;
  Fresh fresh;
  // Index = port number; set by a batch with a GID change, and read only by that batch.
  std::vector<GidWork> gid_work;
  // The device's GUID as records write it, formatted once per device rather than per batch.
  uint64_t guid_of = 0;
  std::string guid;
};

EnrichScratch::EnrichScratch() : parts_(std::make_unique<Parts>()) {}
EnrichScratch::~EnrichScratch() = default;
EnrichScratch::EnrichScratch(EnrichScratch&&) noexcept = default;
EnrichScratch& EnrichScratch::operator=(EnrichScratch&&) noexcept = default;

namespace {

void plan_queries(const std::vector<DecodedEvent>& events, uint32_t num_ports, QueryPlan& plan) {
  plan.port.assign(num_ports + 1, 0);
  plan.pkeys.clear();
  plan.gids = false;
  plan.effective_speed = false;
  for (const auto& ev : events) {
    // A speed change names no port: every port's effective speed is asked, and its attributes
    // read again (they rarely change with it: the effective speed is not among them).
    if (ev.kind == EventKind::kDeviceSpeedChange) {
      std::fill(plan.port.begin() + 1, plan.port.end(), 1);
      plan.effective_speed = true;
    }
    if (ev.port == 0) continue;
    plan.port[ev.port] = 1;
    if (ev.kind == EventKind::kGidChange) plan.gids = true;
    if (ev.kind == EventKind::kPkeyChange) {
      if (plan.pkeys.empty()) plan.pkeys.assign(num_ports + 1, 0);
      plan.pkeys[ev.port] = 1;
    }
  }
}

std::vector<uint32_t> gid_table_lengths(const DeviceView& view) {
  std::vector<uint32_t> lens;
  lens.reserve(view.ports.size());
  for (const auto& pv : view.ports)
    lens.push_back(pv.gid_tbl_len);
  return lens;
}

void run_queries(const QueryPlan& plan, DeviceView& view, DeviceQueries& q, BatchOutcome& out,
                 Fresh& fresh) {
  const uint32_t n = view.num_ports();
  fresh.info.resize(n + 1);
  fresh.gids.reset();
  // Indexed only by the ports of the batch's P_Key changes: sized when there are any.
  if (plan.pkeys.empty())
    fresh.pkeys.clear();
  else
    fresh.pkeys.assign(n + 1, std::nullopt);
  for (uint32_t p = 1; p <= n; ++p) {
    PortView& pv = *view.port(p);
    fresh.info[p] = pv.info;
    if (!plan.port[p]) continue;
    DeviceQueries::PortAttr attr;
    ++out.port_queries;
    if (int err = q.query_port(p, attr); err != 0) {
      out.failures.push_back({QueryFailure::What::kPort, p, err});
    } else {
      fresh.info[p] = attr.info;
      pv.gid_tbl_len = attr.gid_tbl_len;
      pv.pkey_tbl_len = attr.pkey_tbl_len;
    }
  }
  fresh.effective_speed.clear();
  for (uint32_t p = 1; plan.effective_speed && p <= n; ++p)
    fresh.effective_speed.push_back(q.query_effective_speed(p));
  if (plan.gids) {
    std::vector<std::vector<GidEntry>> per_port;
    ++out.gid_queries;
    if (int err = q.query_gids(gid_table_lengths(view), per_port); err != 0) {
      out.failures.push_back({QueryFailure::What::kGids, 0, err});
    } else {
      fresh.gids = std::move(per_port);
    }
  }
  for (uint32_t p = 1; p < plan.pkeys.size(); ++p) {
    if (!plan.pkeys[p]) continue;
    std::vector<uint16_t> table;
    ++out.pkey_queries;
    if (int err = q.query_pkeys(p, view.port(p)->pkey_tbl_len, table); err != 0) {
      out.failures.push_back({QueryFailure::What::kPkeys, p, err});
    } else {
      fresh.pkeys[p] = std::move(table);
    }
  }
}

// After a speed change: a port_state record for each port whose fresh attributes (ibv_query_port's,
// which do not include the effective speed) differ from the view's, which moves to them (a later
// record of the batch sees no change, an earlier one already moved it). A port whose query failed
// keeps its cached state and has no record. A recycled record's device or node GUID is most often
// the one it is given again: compared, then copied only when it differs.
void set_text(std::string& to, const std::string& from) {
  if (!internal::same_text(to, from)) to = from;
}

template <typename NextRecord>
void add_changed_port_states(DeviceView& view, const Fresh& fresh, const std::string& guid,
                             NextRecord&& next_record) {
  for (uint32_t p = 1; p <= view.num_ports(); ++p) {
    PortView& pv = *view.port(p);
    if (fresh.info[p] == pv.info) continue;
    Record& r = next_record();
    r.event = EventKind::kPortState;
    r.event_type = -1;  // made by the daemon, like the port_state records of a device's reopening
    set_text(r.device, view.name);
    set_text(r.node_guid, guid);
    r.port = p;
    r.previous = pv.info;
    r.port_info = fresh.info[p];
    pv.info = fresh.info[p];
  }
}

std::vector<GidChange> gid_changes_in_index_order(GidDiff d) {
  std::vector<GidChange> all;
  for (auto& g : d.removed)
    all.emplace_back(false, std::move(g));
  for (auto& g : d.added)
    all.emplace_back(true, std::move(g));
  // Stable: at one index, the removal of the old entry comes before the addition of the new.
  std::stable_sort(all.begin(), all.end(), [](const GidChange& a, const GidChange& b) {
    return a.second.index < b.second.index;
  });
  return all;
}

void take_gid_changes(GidWork& work, Record& r) {
  const bool last = --work.events_left == 0;
  while (work.next < work.changes.size()) {
    auto& [added, entry] = work.changes[work.next++];
    (added ? r.gids_added : r.gids_removed).push_back(std::move(entry));
    if (!last) break;
  }
}

}  // namespace

std::vector<QueryFailure> load_view(DeviceQueries& queries, uint32_t num_ports, DeviceView& view) {
  std::vector<QueryFailure> failures;
  view.ports.assign(num_ports, PortView{});
  for (uint32_t p = 1; p <= num_ports; ++p) {
    PortView& pv = *view.port(p);
    pv.info.port = p;
    DeviceQueries::PortAttr attr;
    if (int err = queries.query_port(p, attr); err != 0) {
      failures.push_back({QueryFailure::What::kPort, p, err});
      continue;
    }
    pv.info = attr.info;
    pv.gid_tbl_len = attr.gid_tbl_len;
    pv.pkey_tbl_len = attr.pkey_tbl_len;
  }
  std::vector<std::vector<GidEntry>> per_port;
  if (int err = queries.query_gids(gid_table_lengths(view), per_port); err != 0) {
    failures.push_back({QueryFailure::What::kGids, 0, err});
  } else {
    for (uint32_t p = 1; p <= num_ports && p <= per_port.size(); ++p) {
      view.port(p)->gids = std::move(per_port[p - 1]);
    }
  }
  for (uint32_t p = 1; p <= num_ports; ++p) {
    PortView& pv = *view.port(p);
    if (int err = queries.query_pkeys(p, pv.pkey_tbl_len, pv.pkeys); err != 0) {
      failures.push_back({QueryFailure::What::kPkeys, p, err});
    }
  }
  return failures;
}

void reset_record(Record& r) {
  r.stream.clear();
  r.host.clear();
  r.device.clear();
  r.node_guid.clear();
  reset_record_but_identity(r);
}

void reset_record_but_identity(Record& r) {
  // Field by field, in the struct's order (reset_record() clears the four left out). A field
  // added to Record changes its size, which stops the build here until it is reset too (and
  // Record.ResetRecordEqualsANewOne checks it).
#if defined(__x86_64__) && defined(__GLIBCXX__)
  static_assert(sizeof(Record) == 1320, "a Record field was added or changed: reset it here");
#endif
  r.seq = 0;
  r.time_us = 0;
  r.event = EventKind::kUnknown;
  r.event_type = -1;
  r.severity = Severity::kInfo;
  r.port = 0;
  r.port_info.reset();
  r.previous.reset();
  r.gids_added.clear();
  r.gids_removed.clear();
  r.pkeys_added.clear();
  r.pkeys_removed.clear();
  r.ports.clear();
  r.effective_speed.clear();
  r.old_name.clear();
  r.down_since_us = 0;
  r.downtime_ms = 0;
  r.fatal_seq = 0;
  r.object.clear();
  r.object_id = -1;
  r.detail.clear();
  r.reporter.pid = 0;
  r.reporter.uid = -1;
  r.reporter.gid = -1;
  r.reporter.comm.clear();
  r.reporter.unit.clear();
  r.reporter.cgroup.clear();
  r.health.clear();
  r.previous_health.clear();
  r.reason.clear();
  r.since_us = 0;
  r.downs_in_window = 0;
  r.errors_in_window = 0;
  r.window_s = 0;
  r.quiet_s = 0;
  r.cause_seq = 0;
  r.vendor.reset();
  r.link.reset();
  r.devlink.reset();
}

BatchOutcome enrich_batch(DeviceView& view, std::span<const RawEvent> events,
                          DeviceQueries& queries, FatalMeaning fatal, std::vector<Record> recycled,
                          EnrichScratch* scratch) {
  std::optional<EnrichScratch> own;  // only when the caller keeps none
  EnrichScratch::Parts& work = (scratch ? *scratch : own.emplace()).parts();
  BatchOutcome out;
  out.records = std::move(recycled);
  // The next record to build: a recycled one reset to its defaults, else a new one.
  size_t built = 0;
  const auto next_record = [&out, &built]() -> Record& {
    if (built < out.records.size()) {
      Record& r = out.records[built++];
      reset_record_but_identity(r);  // each record below is given its device and node GUID
      return r;
    }
    ++built;
    return out.records.emplace_back();
  };
  std::vector<DecodedEvent>& decoded = work.decoded;
  decoded.clear();
  for (const auto& raw : events)
    decoded.push_back(decode_event(raw, view.num_ports()));

  plan_queries(decoded, view.num_ports(), work.plan);
  Fresh& fresh = work.fresh;
  run_queries(work.plan, view, queries, out, fresh);

  // GID changes are handed out one entry per GID_CHANGE record, in index order: the kernel
  // sends one event per entry added or removed, so a batch of n events normally carries n
  // entries. Any surplus goes to the port's last GID_CHANGE record of the batch.
  // A batch without a GID change (most batches) leaves the work as it is: no record reads it.
  std::vector<GidWork>& gid_work = work.gid_work;
  if (work.plan.gids) {
    gid_work.assign(view.num_ports() + 1, GidWork{});
    for (const auto& ev : decoded) {
      if (ev.kind == EventKind::kGidChange) ++gid_work[ev.port].events_left;
    }
    for (uint32_t p = 1; p <= view.num_ports(); ++p) {
      if (gid_work[p].events_left == 0 || !fresh.gids || p > fresh.gids->size()) continue;
      PortView& pv = *view.port(p);
      std::vector<GidEntry>& now = (*fresh.gids)[p - 1];
      gid_work[p].changes = gid_changes_in_index_order(diff_gids(pv.gids, now));
      pv.gids = std::move(now);
    }
  }

  if (work.guid.empty() || work.guid_of != view.node_guid) {
    work.guid = format_guid(view.node_guid);  // every record of the batch has it
    work.guid_of = view.node_guid;
  }
  const std::string& guid = work.guid;
  out.records.reserve(decoded.size());
  for (const auto& ev : decoded) {
    if (ev.kind == EventKind::kDeviceFatal && fatal == FatalMeaning::kRemoval) {
      next_record() = device_removed_record(view);
      continue;
    }
    Record& r = next_record();
    r.event = ev.kind;
    r.event_type = ev.type;
    set_text(r.device, view.name);
    set_text(r.node_guid, guid);
    r.port = ev.port != 0 ? ev.port : ev.element;
    if (ev.kind == EventKind::kDeviceFatal) {
      for (const auto& pv : view.ports)
        r.ports.push_back(pv.info);
    } else if (ev.kind == EventKind::kDeviceSpeedChange) {
      r.effective_speed = fresh.effective_speed;
      add_changed_port_states(view, fresh, guid, next_record);  // `r` is not used after this
    } else if (ev.port != 0) {
      PortView& pv = *view.port(ev.port);
      r.previous = pv.info;
      r.port_info = fresh.info[ev.port];
      pv.info = fresh.info[ev.port];
      if (ev.kind == EventKind::kGidChange) take_gid_changes(gid_work[ev.port], r);
      if (ev.kind == EventKind::kPkeyChange) {
        // The first PKEY_CHANGE record of the port carries the change; later ones see none.
        if (auto& table = fresh.pkeys[ev.port]; table) {
          PkeyDiff d = diff_pkeys(pv.pkeys, *table);
          r.pkeys_added = std::move(d.added);
          r.pkeys_removed = std::move(d.removed);
          pv.pkeys = std::move(*table);
          table.reset();
        }
      }
    }
  }
  out.records.resize(built);  // recycled records beyond this batch's go
  return out;
}

Record device_record(EventKind kind, const DeviceView& view) {
  Record r;
  r.event = kind;
  r.event_type = -1;
  r.device = view.name;
  r.node_guid = format_guid(view.node_guid);
  r.port = 0;
  return r;
}

Record device_removed_record(const DeviceView& view) {
  Record r = device_record(EventKind::kDeviceRemoved, view);
  for (const auto& pv : view.ports)
    r.ports.push_back(pv.info);
  return r;
}

}  // namespace rdma_eventd::daemon
