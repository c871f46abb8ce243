// LinkHealthMonitor's reads of a device's counters: which files, and what a read that fails
// does to the device (link_health_monitor.h, "Faults that will happen").
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>

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
                                                             Device& d) {
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
  std::vector<std::string> names;
  const std::string dir = path + "/ports/" + std::to_string(port) + "/";
  if (*d.pma) {
    names = {std::string(kSymbolError), std::string(kLinkDowned), std::string(kLinkErrorRecovery)};
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

bool LinkHealthMonitor::read_counters(const std::string& name, Device& d, const std::string& path,
                                      uint32_t port, const std::vector<std::string>& names,
                                      Instant now, std::vector<CounterValue>& values) {
  stats_.counter_reads += names.size();
  const std::optional<CounterReadError> error = read_port_counters(path, port, names, values);
  if (!error) {
    if (d.failed_reads > 0) {
      spdlog::info("{}: its counters are read again, after {} failed read{}", name, d.failed_reads,
                   d.failed_reads == 1 ? "" : "s");
    }
    d.failed_reads = 0;
    d.retry_mono_us = INT64_MIN;
    return true;
  }
  if (!error->transient()) {
    d.failed = true;
    recount();
    ++stats_.read_failures;
    spdlog::warn(
        "{}/{}: cannot read its counters ({}: {}): link quality is not judged on {} "
        "until it is opened again",
        name, port, error->path, error->reason, name);
    return false;
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
        name, port, error->path, error->reason, name, backoff_s,
        int64_t{config_.interval_s} << kMaxReadBackoffDoublings);
  } else {
    spdlog::debug("{}/{}: cannot read its counters ({}: {}), {} times in a row: again in {} s",
                  name, port, error->path, error->reason, d.failed_reads, backoff_s);
  }
  return false;
}

}  // namespace rdma_eventd::daemon
