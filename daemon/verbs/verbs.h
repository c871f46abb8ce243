// The daemon's only contact with libibverbs: listing devices, opening them, reading and acking
// async events, and the queries enrichment needs. Nothing here interprets what it reads; the
// raw values go to core/decode.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/decode.h"
#include "core/device_view.h"

struct ibv_context;
struct ibv_device;

namespace rdma_eventd::daemon::verbs {

struct DeviceEntry {
  // The current name, from sysfs (uverbsN/ibdev). libibverbs keeps the name a process first
  // saw for a device that is renamed later, so ibv_get_device_name alone would go stale.
  std::string name;
  uint64_t node_guid = 0;  // host order
  int index = -1;          // ibv_get_device_index: the kernel's never-reused device index
  std::string uverbs;      // "uverbs0": the device's verbs char device, as udev names it
  std::string ibdev_path;  // <sysfs>/class/infiniband/<name>, for the current name
};

class Context;

// One ibv_get_device_list result, kept until the next scan so its devices can be opened.
class DeviceCatalog {
 public:
  DeviceCatalog() = default;
  ~DeviceCatalog();
  DeviceCatalog(const DeviceCatalog&) = delete;
  DeviceCatalog& operator=(const DeviceCatalog&) = delete;

  // Re-scans (libibverbs re-reads the kernel's list on every call). Returns 0, or the errno of
  // a failed list (ENOSYS: no RDMA support in the kernel). An empty fabric is 0 and no devices.
  int scan();
  const std::vector<DeviceEntry>& devices() const { return entries_; }

  // Opens a device of the last scan: async fd set O_NONBLOCK. Returns nullptr with *error set.
  std::unique_ptr<Context> open(const DeviceEntry& entry, int* error);

 private:
  void release();

  ibv_device** list_ = nullptr;
  std::vector<DeviceEntry> entries_;
  std::vector<ibv_device*> handles_;  // parallel to entries_
};

// An open device context. Closing it (the destructor) is ibv_close_device, which also closes
// its async fd: nobody else may close() that fd.
class Context final : public DeviceQueries {
 public:
  ~Context() override;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceEntry& entry() const { return entry_; }
  // The device was renamed (same index, same uverbsN): sysfs-backed queries follow the new
  // name, which libibverbs's own device struct does not.
  void rename(const DeviceEntry& now);
  uint32_t num_ports() const { return num_ports_; }
  int async_fd() const;

  enum class ReadResult { kEvent, kEmpty, kError };
  // ibv_get_async_event, copy, ibv_ack_async_event at once. kEmpty on EAGAIN; kError sets
  // *error (0 when the read came back short, which libibverbs reports without an errno).
  ReadResult read_event(RawEvent& out, int* error);

  int query_port(uint32_t port, PortAttr& out) override;
  int query_gids(uint32_t num_ports, std::vector<std::vector<GidEntry>>& per_port) override;
  int query_pkeys(uint32_t port, uint32_t table_len, std::vector<uint16_t>& out) override;

 private:
  friend class DeviceCatalog;
  Context(ibv_context* ctx, DeviceEntry entry, uint32_t num_ports, bool renamed);

  // The netdev of a RoCE GID entry, from sysfs (<ibdev_path>/ports/P/gid_attrs/ndevs/I), cached
  // per (port, index, ifindex) since names rarely change and sysfs reads are not free.
  std::string netdev_name(uint32_t port, uint32_t index, uint32_t ifindex);
  int read_sysfs_pkeys(uint32_t port, std::vector<uint16_t>& out);

  ibv_context* ctx_;
  DeviceEntry entry_;
  uint32_t num_ports_;
  // ibv_query_pkey reads sysfs under the name libibverbs knows; once the device has another
  // name, P_Keys are read from entry_.ibdev_path directly.
  bool renamed_ = false;
  std::vector<uint32_t> gid_tbl_len_;  // index = port number
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::string> netdev_cache_;
};

}  // namespace rdma_eventd::daemon::verbs
