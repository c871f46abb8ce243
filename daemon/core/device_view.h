// The daemon's cached view of a device: what it last published for every port, and the GID and
// P_Key tables it last read. "What changed" in a record is always measured against this view.
//
// Also the device source as the rest of the daemon sees it: DeviceCatalog lists and opens
// devices, OpenDevice reads one device's async events and answers its queries. daemon/verbs
// implements them with libibverbs; unit tests with fakes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/decode.h"
#include "core/devx_status.h"
#include "core/port_rate.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

struct PortView {
  PortInfo info;                // as last published
  std::vector<GidEntry> gids;   // non-empty entries, ascending index
  std::vector<uint16_t> pkeys;  // the whole table, position = index, 0 = empty slot
  uint32_t gid_tbl_len = 0;
  uint32_t pkey_tbl_len = 0;
};

struct DeviceView {
  std::string name;
  uint64_t node_guid = 0;       // host order
  std::vector<PortView> ports;  // ports[i] is port i + 1

  PortView* port(uint32_t num) {
    return num >= 1 && num <= ports.size() ? &ports[num - 1] : nullptr;
  }
  uint32_t num_ports() const { return static_cast<uint32_t>(ports.size()); }
};

// Answers about one open device, from libibverbs in the daemon and from a fake in unit tests.
// Every call returns 0 or a positive errno and is expected to be cheap (no blocking I/O).
class DeviceQueries {
 public:
  struct PortAttr {
    PortInfo info;
    uint32_t gid_tbl_len = 0;
    uint32_t pkey_tbl_len = 0;
  };

  virtual ~DeviceQueries() = default;
  virtual int query_port(uint32_t port, PortAttr& out) = 0;
  // The non-empty GID entries of every port in one call; per_port[i] is port i + 1.
  // gid_tbl_lens[i] is port i + 1's GID table length as its last query_port said (0: unknown).
  virtual int query_gids(std::span<const uint32_t> gid_tbl_lens,
                         std::vector<std::vector<GidEntry>>& per_port) = 0;
  virtual int query_pkeys(uint32_t port, uint32_t table_len, std::vector<uint16_t>& out) = 0;
  // The port's effective speed (core/port_rate.h), where the installed libibverbs has
  // ibv_query_port_speed; a source without it says so ("not_in_libibverbs").
  virtual EffectiveSpeed query_effective_speed(uint32_t port) {
    return effective_speed_of(port, {});
  }
};

// A device as the device list shows it.
struct DeviceEntry {
  // The current name. libibverbs keeps the name a process first saw for a device that is
  // renamed later, so the device source reads it from sysfs.
  std::string name;
  uint64_t node_guid = 0;  // host order
  int index = -1;          // the kernel's device index, never reused while the system runs
  std::string ibdev_path;  // <sysfs>/class/infiniband/<name>, for the current name
  // The driver of the device's parent (its device/driver link), "" for a device without one:
  // whether the kernel announces its removal (core/removal_notice.h).
  std::string parent_driver;
};

// One open device. Destroying it closes the device (and its async fd).
class OpenDevice : public DeviceQueries {
 public:
  enum class ReadResult { kEvent, kEmpty, kError };

  const DeviceEntry& entry() const { return entry_; }
  // The device was renamed (same index): what the device source reads by name follows.
  virtual void rename(const DeviceEntry& now) = 0;
  virtual uint32_t num_ports() const = 0;
  // Readable when an async event waits; non-blocking.
  virtual int async_fd() const = 0;
  // The next async event, acked at once. kEmpty when none waits; kError sets *error (0 when
  // the read came back short, which libibverbs reports without an errno).
  virtual ReadResult read_event(RawEvent& out, int* error) = 0;
  // Events acked so far, counted where the ack is made.
  virtual uint64_t events_acked() const = 0;

  // mlx5 vendor events (DEVX; core/devx_decode.h). The event channel's fd, readable when an
  // event waits, non-blocking; -1 when the device has none (devx_status() says why).
  enum class DevxRead { kEvent, kEmpty, kOverflow, kError };
  virtual int devx_fd() const { return -1; }
  virtual const DevxStatus& devx_status() const { return no_devx_; }
  // One event (the 72 bytes of a data-mode read) into `out`. kOverflow: the kernel lost events
  // since the last read (EOVERFLOW); kError sets *error.
  virtual DevxRead read_devx(std::span<uint8_t, 72> out, int* error) {
    (void)out;
    (void)error;
    return DevxRead::kEmpty;
  }

 protected:
  explicit OpenDevice(DeviceEntry entry) : entry_(std::move(entry)) {}
  DeviceEntry entry_;
  DevxStatus no_devx_{DevxState::kNotMlx5, {}, "not an mlx5 device"};
};

// The device list and the way to open its devices.
class DeviceCatalog {
 public:
  virtual ~DeviceCatalog() = default;
  // Lists the devices again. Returns 0, or the errno of a failed list (ENOSYS: no RDMA support
  // in the kernel); a failed list keeps the previous one. An empty fabric is 0 and no devices.
  virtual int scan() = 0;
  virtual const std::vector<DeviceEntry>& devices() const = 0;
  // Opens a device of the last successful scan. Returns nullptr with *error set.
  virtual std::unique_ptr<OpenDevice> open(const DeviceEntry& entry, int* error) = 0;
};

}  // namespace rdma_eventd::daemon
