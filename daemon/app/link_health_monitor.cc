#include "app/link_health_monitor.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <variant>

#include "app/state_files.h"
#include "counters/sysfs_counters.h"
#include "rdma_eventd/internal/same_text.h"
#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon {
namespace {

bool link_is_up(PortState s) {
  return s == PortState::kActive || s == PortState::kActiveDefer;
}

// A port's link events: they are what a link_downed step is tied to.
bool link_event(EventKind e) {
  return e == EventKind::kPortErr || e == EventKind::kPortActive || e == EventKind::kPortState;
}

// An event-driven sample of a port at most this often: a storm of port events costs one read
// of its counters a second, not one per event (the timer and the next event catch up).
constexpr int64_t kMinSampleGapUs = kMicrosPerSecond;

// How long link_downed growth waits for the port_errs that may explain it (events still queued,
// read in later batches) before it is a down too brief for an event. Checked at the timer.
constexpr int64_t kHiddenGraceUs = 3 * kMicrosPerSecond;
// A counter may show a down this long after its event was read (rxe's hw_counters are cached
// for their lifespan, 10 ms by default): a read begun sooner may not show a down carried to it.
constexpr int64_t kCounterLagUs = kMicrosPerSecond;

uint8_t faults_of(const LinkQualityView& v) {
  uint8_t bits = 0;
  for (LinkFault f : v.faults)
    bits |= static_cast<uint8_t>(1u << static_cast<unsigned>(f));
  return bits;
}

void log_change(std::string_view device, uint32_t port, const LinkQualityChange& c) {
  using Kind = LinkQualityChange::Kind;
  switch (c.kind) {
    case Kind::kBad:
      spdlog::warn(
          "{}/{}: {}: {} grew by {} within {} s (at most {} allowed){}", device, port,
          link_fault_name(c.fault), c.counter, c.count, c.window_s, c.allowed,
          c.fault == LinkFault::kBitErrors ? fmt::format(", bit error rate {:.2g}", c.ber) : "");
      return;
    case Kind::kClean:
      spdlog::info("{}/{}: {} clean again: {} within its rule's allowance for the clean period",
                   device, port, link_fault_name(c.fault), c.counter);
      return;
    case Kind::kPegged:
      spdlog::warn(
          "{}/{}: {} is at its maximum ({}): it counts nothing more, its errors are "
          "unknown until it is reset",
          device, port, c.counter, c.value);
      return;
    case Kind::kReset:
      spdlog::info("{}/{}: {} went down to {}: reset by another tool, counted from there", device,
                   port, c.counter, c.value);
      return;
    case Kind::kUnknown:
      // The device's read failure or hang is logged once for all its ports.
      spdlog::debug("{}/{}: link quality unknown ({}: {}), since {}", device, port, c.reason,
                    c.counter.empty() ? "its counters" : c.counter,
                    format_rfc3339_us(c.since_wall_us));
      return;
    case Kind::kJudged:
      spdlog::debug("{}/{}: link quality judged again: its counters read ({} before)", device, port,
                    c.reason);
      return;
    case Kind::kHiddenDown:
      spdlog::warn(
          "{}/{}: {} grew by {} without a port event: link down{} too brief for an "
          "event, counted as down{}",
          device, port, c.counter, c.count, c.count == 1 ? "" : "s", c.count == 1 ? "" : "s");
      return;
  }
}

}  // namespace

std::string link_quality_state_path() {
  return state_file_path("link-quality.json");
}

LinkHealthMonitor::LinkHealthMonitor(EventLoop& loop, const Clock& clock, LinkQualityConfig config,
                                     DevicePath device_path, Deliver deliver,
                                     std::string state_path, PortLinkOf port_link,
                                     std::string ethtool_stand_in)
    : clock_(clock),
      config_(std::move(config)),
      device_path_(std::move(device_path)),
      port_link_(std::move(port_link)),
      deliver_(std::move(deliver)),
      state_path_(std::move(state_path)),
      boot_id_(read_boot_id()),
      timer_(
          loop,
          [this] {
            timer_armed_ = false;  // a one-shot: fired
            on_timer();
          },
          Priority::kSources),
      deadline_timer_(
          loop, [this] { on_deadline(); }, Priority::kSources),
      worker_(
          loop, [this](const std::shared_ptr<CounterReadJob>& job) { on_read_done(job); },
          std::move(ethtool_stand_in)) {}

bool LinkHealthMonitor::excluded(std::string_view name, std::string_view node_guid) const {
  return std::any_of(config_.exclude.begin(), config_.exclude.end(),
                     [&](const DevicePattern& p) { return p.matches(name, node_guid); });
}

LinkHealthMonitor::Device& LinkHealthMonitor::device_of(const std::string& name,
                                                        std::string_view node_guid) {
  auto [it, fresh] = devices_.try_emplace(name);
  if (fresh) {
    it->second.node_guid = node_guid;
    it->second.excluded = excluded(name, node_guid);
    it->second.generation = next_generation_++;
  }
  return it->second;
}

void LinkHealthMonitor::restore(const std::vector<const DeviceView*>& views, Instant now) {
  if (!config_.enabled) return;
  const internal::SmallFile file = internal::read_small_file(state_path_, kMaxStateBytes);
  if (file.error == ENOENT) return;
  if (file.too_large || !file.ok()) {
    spdlog::warn("link quality: cannot read {}: {}; every port starts from a new baseline",
                 state_path_,
                 file.too_large ? fmt::format("larger than {} bytes", kMaxStateBytes)
                                : std::string(std::strerror(file.error)));
    return;
  }
  LinkQualityStateResult result = kLinkQualityStateFile.from_json(file.text, boot_id_, now);
  if (auto* rejected = std::get_if<StateRejected>(&result)) {
    spdlog::warn("link quality: ignoring {}: {}; every port starts from a new baseline",
                 state_path_, rejected->reason);
    return;
  }
  std::vector<PortChanges> bad;
  size_t restored = 0;
  size_t skipped = 0;
  for (const DeviceLinkQualityState& saved :
       std::get<std::vector<DeviceLinkQualityState>>(result)) {
    // The same device: its name and its node GUID (a name given to another adapter since, or a
    // device gone, starts from a new baseline when it is read).
    const auto view = std::find_if(views.begin(), views.end(), [&](const DeviceView* v) {
      return v->name == saved.device && format_guid(v->node_guid) == saved.node_guid;
    });
    if (view == views.end()) {
      ++skipped;
      continue;
    }
    Device& d = device_of(saved.device, saved.node_guid);
    if (d.excluded) continue;
    for (const PortLinkQualityState& port : saved.ports) {
      if (port.port > (*view)->num_ports()) continue;
      Port& p = d.ports[port.port];
      p.quality.restore(port.state);
      ++restored;
      // Its faults, and no change: port health keeps the verdict it restored, no record says
      // the link went bad again.
      if (p.quality.bad()) bad.push_back(changes_of(saved.device, d, port.port, p, {}));
    }
  }
  spdlog::info("link quality: restored {} port{} from {}{}", restored, restored == 1 ? "" : "s",
               state_path_,
               skipped == 0 ? ""
                            : fmt::format(" ({} device{} not present with the same node GUID)",
                                          skipped, skipped == 1 ? "" : "s"));
  if (!bad.empty()) deliver_(bad, now);
}

void LinkHealthMonitor::observe_devices(const std::vector<const DeviceView*>& views, Instant now) {
  if (!config_.enabled) return;
  std::vector<PortChanges> out;
  const CounterReadWorker::Batch batch(worker_);  // one thread reads them all
  for (const DeviceView* v : views) {
    Device& d = device_of(v->name, format_guid(v->node_guid));
    std::vector<uint32_t> up;
    for (uint32_t n = 1; n <= v->num_ports(); ++n) {
      Port& p = d.ports[n];
      set_link_up(d, p, link_is_up(v->ports[n - 1].info.state));
      p.rate = {v->ports[n - 1].info.lanes, v->ports[n - 1].info.speed};
      update_unknown(v->name, d, n, p, now, out);
      if (p.link_up) up.push_back(n);
    }
    // First samples: baselines (or the first reads across a restart), judged when they return.
    if (!up.empty()) request_read(v->name, d, up, now);
  }
  if (!out.empty()) deliver_(out, now);
  arm();
}

void LinkHealthMonitor::on_record(const Record& r, Instant now, std::vector<PortChanges>& out) {
  if (!config_.enabled) return;
  switch (r.event) {
    case EventKind::kDeviceAdded:
    case EventKind::kDeviceRecovered:
    case EventKind::kDeviceRemoved:
    case EventKind::kDeviceFatal:
      device_reopened_or_gone(r);
      state_dirty_ = true;
      recount();
      arm();
      return;
    case EventKind::kDeviceRenamed:
      if (auto node = devices_.extract(r.old_name)) {
        node.key() = r.device;
        node.mapped().excluded = excluded(r.device, node.mapped().node_guid);
        devices_.insert(std::move(node));
        recount();
        state_dirty_ = true;
      }
      return;
    default:
      break;
  }
  if (!r.port_info || r.device.empty()) return;
  // Records come a device's batch at a time: the last device found is the likely one.
  if (!last_device_ || !internal::same_text(last_device_name_, r.device)) {
    last_device_ = &device_of(r.device, r.node_guid);
    last_device_name_ = r.device;
  }
  Device& d = *last_device_;
  Port& p = d.ports[r.port];
  // A port new to the monitor, or whose link changed: what its link quality is now.
  if (set_link_up(d, p, link_is_up(r.port_info->state)) || p.unknown_since_wall_us == 0)
    update_unknown(r.device, d, r.port, p, now, out);
  p.rate = {r.port_info->lanes, r.port_info->speed};
  if (r.event == EventKind::kPortErr) {
    ++p.port_errs;
    p.last_port_err_mono_us = now.mono_us;
    // A down the counter already showed, its event read only now: explained.
    if (p.unexplained > 0)
      --p.unexplained;
    else
      ++p.downs_seen;
  }
  if (link_event(r.event) && (p.last_sample_mono_us == INT64_MIN ||
                              now.mono_us - p.last_sample_mono_us >= kMinSampleGapUs)) {
    p.last_sample_mono_us = now.mono_us;  // asked for: the next event's waits its second
    request_read(r.device, d, {r.port}, now);
  }
  arm();
}

// Gone, dead or opened again (a driver reload, a replug, a recovery): its counters start from a
// new baseline and a device that could not be read is tried again. A port whose link was bad
// keeps its fault and its growth (port health takes the port's history back when the same
// device returns): it is clean after its clean period, as if the device had stayed. A device
// with nothing bad, or back with another node GUID (other hardware), is forgotten.
void LinkHealthMonitor::device_reopened_or_gone(const Record& r) {
  auto it = devices_.find(r.device);
  if (it == devices_.end()) return;
  Device& d = it->second;
  const bool other_hardware = !r.node_guid.empty() && r.node_guid != d.node_guid;
  const bool any_bad = std::any_of(d.ports.begin(), d.ports.end(),
                                   [](const auto& port) { return port.second.quality.bad(); });
  if (other_hardware || !any_bad) {
    devices_.erase(it);
    return;
  }
  d.failed = false;
  d.failed_reads = 0;
  d.retry_mono_us = INT64_MIN;
  d.nothing_to_read = false;
  d.pma.reset();
  // A read of the device before it was opened again is no read of it now: dropped when it
  // returns (if it ever does), and the new one may be read meanwhile.
  d.generation = next_generation_++;
  d.reading.reset();
  d.hung = false;
  for (auto& [number, p] : d.ports) {
    p.link_up = false;  // recount() follows; the next record or sample says what it is now
    p.downs_seen = 0;
    p.downs_carried = 0;
    p.port_errs_at_read = p.port_errs;
    p.down_before_next = false;
    p.unexplained = 0;
    p.last_sample_mono_us = INT64_MIN;
    p.pending = false;
    p.quality.forget_baseline();
  }
}

void LinkHealthMonitor::sample(const std::string& name, Device& d, uint32_t number, Port& p,
                               CounterReadJob::Port& read, int64_t read_started_mono_us,
                               Instant now, std::vector<PortChanges>& out) {
  ++stats_.samples;
  p.last_sample_mono_us = now.mono_us;
  const std::string downed_name(*d.pma ? kLinkDowned : kHwLinkDowned);
  const bool downed_read =
      std::any_of(read.values.begin(), read.values.end(),
                  [&](const CounterValue& c) { return c.name == downed_name; });
  // The link as it was when the read was asked for: what the values were read of.
  PortSample s{read.rate,
               read.link_up,
               p.downs_seen + p.downs_carried,
               std::move(read.values),
               p.downs_seen > 0 || p.down_before_next,
               read.ethernet};
  const uint32_t port_errs_while_out = p.port_errs - p.port_errs_at_read;
  p.down_before_next = port_errs_while_out > 0;
  std::vector<LinkQualityChange> changes;
  const uint64_t revision = p.quality.revision();
  p.quality.sample(config_, s, now, changes);
  if (p.quality.revision() != revision) state_dirty_ = true;
  for (const LinkQualityChange& c : changes) {
    if (c.kind == LinkQualityChange::Kind::kBad || c.kind == LinkQualityChange::Kind::kClean)
      faults_changed_ = true;
  }
  // The downs that link_downed did not show yet may show in the next sample. When it was not
  // read, its port_errs wait for the next read of it within the quality (none is carried).
  const std::optional<uint64_t> grew = p.quality.last_growth(downed_name);
  if (grew) {
    const bool carried_may_lag = read_started_mono_us - p.carried_at_mono_us < kCounterLagUs;
    p.downs_carried = downs_to_carry(p.downs_seen, p.downs_carried, *grew, carried_may_lag);
  } else if (downed_read && p.last_port_err_mono_us >= read.read_mono_us) {
    // A baseline (the port's first read, or the first after a reset) holds the downs whose
    // events were read before its read of link_downed began. Those read since may be in its
    // value or not: carried, for the next read to set against its growth.
    p.downs_carried = std::min(p.downs_seen, port_errs_while_out);
  } else {
    p.downs_carried = 0;
  }
  p.carried_at_mono_us = now.mono_us;
  p.downs_seen = 0;
  // Growth of link_downed beyond the port_errs read so far waits for theirs (kHiddenGraceUs).
  for (auto it = changes.begin(); it != changes.end();) {
    if (it->kind != LinkQualityChange::Kind::kHiddenDown) {
      ++it;
      continue;
    }
    if (p.unexplained == 0) p.unexplained_since_mono_us = now.mono_us;
    p.unexplained += it->count;
    p.unexplained_change = *it;
    it = changes.erase(it);
  }
  if (!changes.empty()) out.push_back(changes_of(name, d, number, p, std::move(changes)));
}

void LinkHealthMonitor::confirm_hidden_downs(const std::string& name, const Device& d,
                                             uint32_t number, Port& p, Instant now,
                                             std::vector<PortChanges>& out) {
  if (p.unexplained == 0 || now.mono_us - p.unexplained_since_mono_us < kHiddenGraceUs) return;
  LinkQualityChange c = p.unexplained_change;
  c.count = p.unexplained;
  p.unexplained = 0;
  out.push_back(changes_of(name, d, number, p, {c}));
}

LinkHealthMonitor::PortChanges LinkHealthMonitor::changes_of(
    const std::string& name, const Device& d, uint32_t number, const Port& p,
    std::vector<LinkQualityChange> changes) {
  const LinkQualityView v = p.quality.view();
  PortChanges c{name, d.node_guid, number, std::move(changes), faults_of(v), 0, p.rate, v.pegged};
  for (const LinkQualityChange& change : c.changes) {
    log_change(name, number, change);
    if (change.kind == LinkQualityChange::Kind::kHiddenDown)
      c.hidden_downs += static_cast<uint32_t>(std::min<uint64_t>(change.count, UINT32_MAX));
  }
  return c;
}

// A sweep asks for a read of every device's ports that are up (one job per device, read beside
// the loop by one thread: app/counter_read_worker): their values are judged when they return,
// while the loop goes on with every device's events.
void LinkHealthMonitor::on_timer() {
  const Instant now = clock_.now();
  sweep_started_mono_us_ = now.mono_us;
  std::vector<PortChanges> out;
  {
    const CounterReadWorker::Batch batch(worker_);  // one thread wakes for the sweep
    for (auto& [name, d] : devices_) {
      std::vector<uint32_t> up;
      for (auto& [number, p] : d.ports) {
        // A fault is cleared only by a read that shows its clean period without growth
        // (sample() judges it): time alone does not, so a port that is not read (its link down,
        // its device's reads failing or given up on) keeps its faults; nothing says they are
        // gone.
        if (p.link_up) up.push_back(number);
        confirm_hidden_downs(name, d, number, p, now, out);
      }
      if (!up.empty()) request_read(name, d, up, now);
    }
  }
  if (faults_changed_ || state_dirty_) save();
  if (!out.empty()) deliver_(out, now);
  // The next sweep an interval after this one began.
  const int64_t next_us =
      std::max<int64_t>(0, sweep_started_mono_us_ + int64_t{config_.interval_s} * kMicrosPerSecond -
                               clock_.now().mono_us);
  if (wanted()) {
    timer_.arm(std::chrono::microseconds(next_us));
    timer_armed_ = true;
  }
}

void LinkHealthMonitor::stop() {
  save();  // at a clean exit, always: the restart reads it back
}

std::vector<DeviceLinkQualityState> LinkHealthMonitor::export_state() const {
  std::vector<DeviceLinkQualityState> out;
  for (const auto& [name, d] : devices_) {
    if (d.excluded) continue;
    DeviceLinkQualityState device{name, d.node_guid, {}};
    for (const auto& [number, p] : d.ports) {
      LinkQualityState state = p.quality.export_state();
      if (state.sampled) device.ports.push_back({number, std::move(state)});
    }
    if (!device.ports.empty()) out.push_back(std::move(device));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.device < b.device; });
  if (out.size() > kMaxStateDevices) out.resize(kMaxStateDevices);  // never more than is read
  return out;
}

// Whole or not at all (a temporary file beside it, fsync, rename). A failure is counted, and
// logged once until a write succeeds again: the daemon goes on without it.
void LinkHealthMonitor::save() {
  state_dirty_ = false;
  faults_changed_ = false;
  int err = 0;
  if (!config_.enabled) {
    // Counter health off: nothing to keep, and no stale state for a later start on this boot.
    if (::unlink(state_path_.c_str()) != 0 && errno != ENOENT) err = errno;
  } else {
    const std::string text =
        kLinkQualityStateFile.to_json(export_state(), boot_id_, clock_.now()) + "\n";
    err = write_state_file(state_path_, text);
  }
  if (err != 0) ++stats_.state_write_failures;
  if (err != 0 && !save_failing_) {
    spdlog::warn(
        "link quality: cannot write {}: {} (the counters' state will not survive a restart)",
        state_path_, std::strerror(err));
  }
  save_failing_ = err != 0;
}

bool LinkHealthMonitor::readable(const Device& d) {
  return !d.excluded && !d.failed && !d.nothing_to_read;
}

bool LinkHealthMonitor::set_link_up(const Device& d, Port& p, bool up) {
  if (p.link_up == up) return false;
  p.link_up = up;
  if (readable(d)) readable_up_ += up ? 1 : -1;
  return true;
}

void LinkHealthMonitor::recount() {
  last_device_ = nullptr;  // the set or its flags changed: look devices up again
  readable_up_ = 0;
  for (const auto& [name, d] : devices_) {
    if (!readable(d)) continue;
    for (const auto& [number, p] : d.ports)
      readable_up_ += p.link_up;
  }
}

// Kept O(1) on the event path: a port up that can be read is the common reason for the timer;
// the ports are looked at only when none is (a bad verdict to clean, downs to confirm).
bool LinkHealthMonitor::wanted() const {
  if (!config_.enabled) return false;
  if (readable_up_ > 0) return true;
  // A bad port that is not read waits for its next read, not for time.
  for (const auto& [name, d] : devices_) {
    for (const auto& [number, p] : d.ports) {
      if (p.unexplained > 0) return true;
    }
  }
  return false;
}

void LinkHealthMonitor::arm() {
  if (timer_armed_ && config_.enabled && readable_up_ > 0) return;
  if (!wanted()) {
    if (timer_armed_) timer_.cancel();
    timer_armed_ = false;
    return;
  }
  if (!timer_armed_) timer_.arm(std::chrono::seconds(config_.interval_s));
  timer_armed_ = true;
}

std::vector<LinkHealthMonitor::PortChanges> LinkHealthMonitor::set_config(
    LinkQualityConfig config) {
  const bool interval_changed = config.interval_s != config_.interval_s;
  config_ = std::move(config);
  std::vector<PortChanges> released;
  for (auto& [name, d] : devices_) {
    d.excluded = excluded(name, d.node_guid);
    d.nothing_to_read = false;  // a transport rule may name a counter it has
    if (config_.enabled && !d.excluded) continue;
    // No longer judged: its ports forget their counters, and their faults are dropped.
    for (auto& [number, p] : d.ports) {
      if (p.quality.bad()) {
        PortChanges c{name, d.node_guid, number, {}, 0, 0, p.rate, {}};
        c.released = true;
        released.push_back(std::move(c));
      }
      p.quality = PortLinkQuality{};
      p.unexplained = 0;
    }
  }
  if (!config_.enabled) devices_.clear();
  state_dirty_ = true;
  recount();
  if (interval_changed && timer_armed_) {
    timer_.cancel();
    timer_armed_ = false;
  }
  arm();
  return released;
}

std::optional<LinkQualityView> LinkHealthMonitor::view(std::string_view device,
                                                       uint32_t port) const {
  auto it = devices_.find(device);
  if (it == devices_.end() || it->second.excluded) return std::nullopt;
  auto pit = it->second.ports.find(port);
  if (pit == it->second.ports.end()) return std::nullopt;
  return pit->second.quality.view();
}

StatusReply::LinkHealth link_health_status(const LinkHealthMonitor& links,
                                           const std::vector<const DeviceView*>& views) {
  StatusReply::LinkHealth s;
  const auto& stats = links.stats();
  s.enabled = links.config().enabled;
  s.interval_s = links.config().interval_s;
  s.samples = stats.samples;
  s.counter_reads = stats.counter_reads;
  s.read_failures = stats.read_failures;
  s.read_retries = stats.read_retries;
  s.reads_hung = stats.reads_hung;
  s.reads_in_flight = links.reads_in_flight();
  auto joined = [](const auto& names) {
    std::string out;
    for (const auto& n : names)
      out += (out.empty() ? "" : ",") + std::string(n);
    return out;
  };
  for (const DeviceView* d : views) {
    for (uint32_t n = 1; n <= d->num_ports(); ++n) {
      const std::optional<LinkQualityView> v = links.view(d->name, n);
      const std::optional<LinkHealthMonitor::Quality> q = links.quality(d->name, n);
      if (!v || !q) continue;  // not watched
      StatusReply::LinkPort p{d->name,           n,  v->bad,     {},         v->ber_estimate,
                              joined(v->pegged), {}, q->quality, q->unknown, q->since_wall_us};
      std::vector<std::string_view> faults;
      for (LinkFault f : v->faults)
        faults.push_back(link_fault_name(f));
      p.faults = joined(faults);
      p.counters.assign(v->values.begin(), v->values.end());
      s.ports.push_back(std::move(p));
    }
  }
  return s;
}

}  // namespace rdma_eventd::daemon
