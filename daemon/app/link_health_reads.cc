// LinkHealthMonitor's reads of a device's counters: which files, and what a read that fails
// does to the device (link_health_monitor.h, "Faults that will happen").
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "app/link_health_monitor.h"
#include "counters/sysfs_counters.h"

namespace rdma_eventd::daemon {
namespace {

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::vector<std::string> LinkHealthMonitor::counters_to_read(const std::string& path, uint32_t port,
                                                             Device& d, bool ethernet) {
  if (!d.pma) {
    const CounterGroups groups = counter_groups(path, port);
    d.pma = groups.pma;
    if (!groups.pma) {
      spdlog::info(
          "{}: no counters/ group (a driver without a PMA, like rxe): bit errors and "
          "link recoveries are not judged on it{}",
          path.substr(path.rfind('/') + 1),
          groups.hw ? ", brief downs are read from hw_counters/link_downed" : "");
    }
  }
  // link_downed first: when its read began (CounterReadJob::Port::read_mono_us) tells which
  // port_errs were read before its value.
  std::vector<std::string> names;
  const std::string dir = path + "/ports/" + std::to_string(port) + "/";
  if (*d.pma && ethernet) {
    // A RoCE port's counters/symbol_error and link_error_recovery come from an InfiniBand
    // counter group, not from its PHY: its bit errors are its netdev's FEC statistics.
    names = {std::string(kLinkDowned)};
  } else if (*d.pma) {
    names = {std::string(kLinkDowned), std::string(kSymbolError), std::string(kLinkErrorRecovery)};
  } else if (file_exists(dir + std::string(kHwLinkDowned))) {
    names = {std::string(kHwLinkDowned)};
  }
  // A transport rule reads its counter where the driver has it (mlx5's names are not rxe's).
  for (const GrowthRule& rule : config_.transport) {
    if (std::find(names.begin(), names.end(), rule.counter) == names.end() &&
        file_exists(dir + (rule.counter.starts_with("hw_counters/") ? rule.counter
                                                                    : "counters/" + rule.counter)))
      names.push_back(rule.counter);
  }
  return names;
}

void LinkHealthMonitor::request_read(const std::string& name, Device& d,
                                     const std::vector<uint32_t>& ports, Instant now) {
  if (d.excluded || d.failed || now.mono_us < d.retry_mono_us) return;
  if (d.reading) {
    // One read of a device at a time: these ports are read when it returns (not at all while
    // it hangs).
    for (uint32_t number : ports)
      d.ports[number].pending = true;
    return;
  }
  const DeviceDir dir = device_path_(name);
  if (dir.path.empty()) return;
  const std::string& path = dir.path;
  auto job = std::make_shared<CounterReadJob>();
  job->device = name;
  job->path = path;
  job->driver = counter_driver(dir.parent_driver);
  job->generation = d.generation;
  job->started_mono_us = now.mono_us;
  for (uint32_t number : ports) {
    const PortLink link = port_link_ ? port_link_(name, number) : PortLink{};
    std::vector<std::string> names = counters_to_read(path, number, d, link.ethernet);
    if (names.empty() && link.netdev.empty()) {
      d.nothing_to_read = true;  // the timer need not wake for it
      recount();
      return;
    }
    Port& p = d.ports[number];
    p.pending = false;
    p.port_errs_at_read = p.port_errs;
    stats_.counter_reads += names.size() + (link.netdev.empty() ? 0 : 2);
    CounterReadJob::Port read{number, std::move(names), p.link_up, p.rate, {}};
    read.ethernet = link.ethernet;
    read.netdev = link.netdev;
    job->ports.push_back(std::move(read));
  }
  if (job->ports.empty() || !worker_.start(job)) return;
  d.reading = std::move(job);
  arm_deadline();
}

void LinkHealthMonitor::on_read_done(const std::shared_ptr<CounterReadJob>& job) {
  auto it = devices_.find(job->device);
  // Gone, opened again or renamed since it was asked for: not this device's values.
  if (it == devices_.end() || it->second.generation != job->generation || it->second.reading != job)
    return;
  Device& d = it->second;
  const std::string& name = it->first;
  d.reading.reset();
  const Instant now = clock_.now();
  if (d.hung) {
    d.hung = false;
    spdlog::info("{}: the read of {} returned after {} s", name, d.failed_counter,
                 (now.mono_us - job->started_mono_us) / kMicrosPerSecond);
  }
  // Its sysfs directory went while it was read (renamed, or unregistered: the record of that
  // follows): a file that went with it is no failure of its counters, and its values are not
  // taken. Read again under its name when its record has come.
  if (job->error && !file_exists(job->path)) {
    spdlog::debug("{}: {} went while its counters were read ({}): not taken", name, job->path,
                  job->error->path);
    arm_deadline();
    return;
  }
  std::vector<PortChanges> out;
  if (!d.excluded) {
    for (CounterReadJob::Port& read : job->ports) {
      if (job->error && read.number == job->error_port) break;
      Port& p = d.ports[read.number];
      note_phy_read(name, read.number, p, read);
      sample(name, d, read.number, p, read, job->started_mono_us, now, out);
    }
    if (job->error) {
      read_failed(name, d, job->error_port, *job->error, now);
    } else if (d.failed_reads > 0) {
      spdlog::info("{}: its counters are read again, after {} failed read{}", name, d.failed_reads,
                   d.failed_reads == 1 ? "" : "s");
      d.failed_reads = 0;
      d.retry_mono_us = INT64_MIN;
    }
    update_unknown_all(name, d, now, out);
  }
  // A fault that changed is saved before its record goes out (as port health saves a verdict);
  // other changes wait for the timer's tick: at most one write per interval_s.
  if (faults_changed_) save();
  if (!out.empty()) deliver_(out, now);
  // The samples asked for meanwhile, and the deadline of the reads still out.
  std::vector<uint32_t> pending;
  for (auto& [number, p] : d.ports) {
    if (p.pending && p.link_up) pending.push_back(number);
    p.pending = false;
  }
  if (!pending.empty()) request_read(name, d, pending, now);
  arm_deadline();
  arm();
}

// A RoCE port whose PHY counters cannot be read is not judged for bit errors
// (no_fec_statistics): said once until a read works again.
void LinkHealthMonitor::note_phy_read(const std::string& name, uint32_t number, Port& p,
                                      const CounterReadJob::Port& read) {
  if (read.netdev.empty()) return;
  if (read.phy_error == 0) {
    if (p.phy_error != 0)
      spdlog::info("{}/{}: the FEC statistics of {} are read again", name, number, read.netdev);
    p.phy_error = 0;
    return;
  }
  if (read.phy_error == p.phy_error) return;
  p.phy_error = read.phy_error;
  // A driver without FEC statistics (rxe's netdev, a virtual one) is how it is, no fault.
  spdlog::log(read.phy_error == EOPNOTSUPP ? spdlog::level::info : spdlog::level::warn,
              "{}/{}: cannot read the PHY counters of its netdev {} ({}: {}): its bit errors are "
              "not judged while they cannot be read{}",
              name, number, read.netdev, read.phy_error_what, std::strerror(read.phy_error),
              read.phy_error == EOPNOTSUPP ? " (its driver has no FEC statistics)" : "");
}

void LinkHealthMonitor::read_failed(const std::string& name, Device& d, uint32_t port,
                                    const CounterReadError& error, Instant now) {
  d.failed_counter = error.path;
  if (!error.transient()) {
    d.failed = true;
    recount();
    ++stats_.read_failures;
    spdlog::warn(
        "{}/{}: cannot read its counters ({}: {}): link quality is not judged on {} "
        "until it is opened again",
        name, port, error.path, error.reason, name);
    return;
  }
  // Read again after one interval, then twice as long each time, up to
  // 2^kMaxReadBackoffDoublings intervals: a firmware that stopped answering is not asked at
  // every tick.
  ++stats_.read_retries;
  const uint32_t doublings = std::min<uint32_t>(d.failed_reads, kMaxReadBackoffDoublings);
  const int64_t backoff_s = int64_t{config_.interval_s} << doublings;
  ++d.failed_reads;
  d.retry_mono_us = now.mono_us + backoff_s * kMicrosPerSecond;
  if (d.failed_reads == 1) {
    spdlog::warn(
        "{}/{}: cannot read its counters ({}: {}), a failure that may pass: reading {} again "
        "in {} s, then at twice the interval each time up to {} s while it fails; its link "
        "quality is not judged meanwhile",
        name, port, error.path, error.reason, name, backoff_s,
        int64_t{config_.interval_s} << kMaxReadBackoffDoublings);
  } else {
    spdlog::debug("{}/{}: cannot read its counters ({}: {}), {} times in a row: again in {} s",
                  name, port, error.path, error.reason, d.failed_reads, backoff_s);
  }
}

void LinkHealthMonitor::arm_deadline() {
  std::optional<int64_t> next;
  for (const auto& [name, d] : devices_) {
    if (!d.reading || d.hung) continue;
    const int64_t at =
        d.reading->started_mono_us + int64_t{config_.read_deadline_s} * kMicrosPerSecond;
    if (!next || at < *next) next = at;
  }
  if (!next) {
    deadline_timer_.cancel();
    return;
  }
  deadline_timer_.arm(
      std::chrono::microseconds(std::max<int64_t>(0, *next - clock_.now().mono_us)));
}

// Reported once a read: its ports' link quality is unknown (read_hung) until it returns.
void LinkHealthMonitor::on_deadline() {
  const Instant now = clock_.now();
  std::vector<PortChanges> out;
  for (auto& [name, d] : devices_) {
    if (!d.reading || d.hung) continue;
    const int64_t started_us = d.reading->started_mono_us;
    if (now.mono_us - started_us < int64_t{config_.read_deadline_s} * kMicrosPerSecond) continue;
    d.hung = true;
    ++stats_.reads_hung;
    d.failed_counter = d.reading->reading();
    const int64_t since_wall_us = now.wall_us - (now.mono_us - started_us);
    spdlog::warn(
        "{}: reading {} has not returned since {} ({} s): its ports' link quality is unknown, and "
        "{} is not read again until the read returns",
        name, d.failed_counter.empty() ? "its counters" : d.failed_counter,
        format_rfc3339_us(since_wall_us), (now.mono_us - started_us) / kMicrosPerSecond, name);
    // Unknown since the read began, not since the deadline.
    for (const CounterReadJob::Port& read : d.reading->ports)
      update_unknown(name, d, read.number, d.ports[read.number], now, out, since_wall_us);
  }
  if (!out.empty()) deliver_(out, now);
  arm_deadline();
}

void LinkHealthMonitor::update_unknown(const std::string& name, const Device& d, uint32_t number,
                                       Port& p, Instant now, std::vector<PortChanges>& out,
                                       std::optional<int64_t> since_wall_us) {
  if (d.excluded) return;
  std::string_view unknown;
  if (!p.link_up)
    unknown = "link_down";
  else if (d.hung)
    unknown = "read_hung";
  else if (d.failed)
    unknown = "unreadable";
  else if (d.failed_reads > 0)
    unknown = "read_failing";
  else if (d.nothing_to_read)
    unknown = "no_error_counters";
  else
    unknown = p.quality.unknown();
  // A port watched from now on: what it is (not read yet, most often) is since now.
  if (p.unknown_since_wall_us == 0) p.unknown_since_wall_us = since_wall_us.value_or(now.wall_us);
  if (unknown == p.unknown) return;
  const bool of_reads =
      unknown == "read_hung" || unknown == "unreadable" || unknown == "read_failing";
  p.unknown = unknown;
  p.unknown_since_wall_us = since_wall_us.value_or(now.wall_us);
  LinkQualityChange change;
  if (of_reads) {
    change.kind = LinkQualityChange::Kind::kUnknown;
    change.reason = std::string(unknown);
    change.since_wall_us = p.unknown_since_wall_us;
    p.unknown_told = unknown;
  } else if (unknown.empty() && !p.unknown_told.empty()) {
    change.kind = LinkQualityChange::Kind::kJudged;
    change.reason = std::string(std::exchange(p.unknown_told, {}));
  } else {
    return;
  }
  const std::string& file = d.failed_counter;
  const size_t group = file.rfind("/counters/");
  const size_t hw = file.rfind("/hw_counters/");
  change.counter = hw != std::string::npos      ? file.substr(hw + 1)
                   : group != std::string::npos ? file.substr(group + 10)
                                                : file;
  out.push_back(changes_of(name, d, number, p, {change}));
}

void LinkHealthMonitor::update_unknown_all(const std::string& name, Device& d, Instant now,
                                           std::vector<PortChanges>& out) {
  for (auto& [number, p] : d.ports)
    update_unknown(name, d, number, p, now, out);
}

std::optional<LinkHealthMonitor::Quality> LinkHealthMonitor::quality(std::string_view device,
                                                                     uint32_t port) const {
  auto it = devices_.find(device);
  if (it == devices_.end() || it->second.excluded) return std::nullopt;
  auto pit = it->second.ports.find(port);
  if (pit == it->second.ports.end()) return std::nullopt;
  const Port& p = pit->second;
  Quality q;
  q.unknown = std::string(p.unknown);
  if (p.quality.bad()) {
    q.quality = "bad";
    q.since_wall_us = p.quality.view().since.wall_us;
  } else {
    q.quality = p.unknown.empty() ? "clean" : "unknown";
    q.since_wall_us = p.unknown_since_wall_us;
  }
  return q;
}

}  // namespace rdma_eventd::daemon
