// The counters source: a port's error counters as the kernel shows them in sysfs
// (<ibdev_path>/ports/N/counters/ and hw_counters/; docs/health.md, "Link quality"). Only reads:
// a host daemon never writes or resets a counter (that would destroy every other tool's data).
//
// Each read of counters/ is a firmware access on mlx5, so the caller reads only the counters
// its rules use, at most once a port event or once the coarse timer's period.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/counter_width.h"
#include "core/link_quality.h"

namespace rdma_eventd::daemon {

// Which groups a device's ports have (the kernel creates counters/ only for drivers with
// process_mad: mlx5 yes, rxe no).
struct CounterGroups {
  bool pma = false;  // ports/N/counters/
  bool hw = false;   // ports/N/hw_counters/
};
CounterGroups counter_groups(const std::string& ibdev_path, uint32_t port);

// Why a counter could not be read: "cannot open PATH: No such file or directory", "PATH is
// empty", "PATH does not hold a number: 'N/A (no PMA)'", "cannot read PATH: Input/output error".
struct CounterReadError {
  std::string path;
  std::string reason;
  int error = 0;  // the errno of a failed open or read; 0 for what the file holds
  // A failure that may pass: a read that failed with any errno but those that say the file
  // is not there or not for us (ENOENT, ENOTDIR, ENODEV, ENXIO, EACCES, EPERM). A failed
  // firmware command is one: EIO, ETIMEDOUT, EBUSY or EAGAIN from hw_counters/, and EINVAL from
  // counters/, as get_perf_mad() turns any failed MAD into. An empty file or one that holds
  // no number (older kernels' "N/A (no PMA)") stays as it is.
  bool transient() const;
};

// The file of a counter (as CounterValue::name) of ibdev_path's port `port`.
std::string counter_path(const std::string& ibdev_path, uint32_t port, const std::string& name);

// Reads `names` (as CounterValue::name: "symbol_error", "hw_counters/out_of_sequence") of
// ibdev_path's port `port`, with their widths as the device's driver has them
// (core/counter_width). Stops at the first counter that cannot be read and returns why.
std::optional<CounterReadError> read_port_counters(const std::string& ibdev_path, uint32_t port,
                                                   const std::vector<std::string>& names,
                                                   CounterDriver driver,
                                                   std::vector<CounterValue>& out);

// One counter file's text as a value: decimal digits, then at most a newline. False for
// anything else (empty, "N/A (no PMA)", a sign, more than 64 bits).
bool parse_counter_text(std::string_view text, uint64_t& value);

}  // namespace rdma_eventd::daemon
