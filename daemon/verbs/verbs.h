// The daemon's only contact with libibverbs: listing devices, opening them, reading and acking
// async events, and the queries enrichment needs. What it reads is copied into plain structs
// and handed to core/decode for every interpretation (decode_port, gid_type_from_raw); it
// answers DeviceQueries in decoded terms because enrichment asks in those terms.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/decode.h"
#include "core/device_view.h"
#include "verbs/devx.h"

struct ibv_context;
struct ibv_device;
struct ibv_port_attr;

namespace rdma_eventd::daemon::verbs {

// A port's attributes as ibv_query_port gave them, decoded (core/decode.h). A speed that
// active_speed cannot carry is unknown here; Context::query_port reads it from sysfs.
DeviceQueries::PortAttr port_attr_of(uint32_t port, const ibv_port_attr& attr);

// The last successful ibv_get_device_list result, kept until the next one so its devices can
// be opened.
class Catalog final : public DeviceCatalog {
 public:
  Catalog() = default;
  ~Catalog() override;
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // libibverbs re-reads the kernel's list on every call.
  int scan() override;
  const std::vector<DeviceEntry>& devices() const override { return entries_; }
  // Async fd set O_NONBLOCK.
  std::unique_ptr<OpenDevice> open(const DeviceEntry& entry, int* error) override;

 private:
  void release();

  ibv_device** list_ = nullptr;
  std::vector<DeviceEntry> entries_;
  std::vector<ibv_device*> handles_;  // parallel to entries_
};

// An open device context: for an mlx5 device a DEVX context with its event channel when the
// firmware allows (verbs/devx.h). Closing it (the destructor) is ibv_close_device, which also
// closes its async fd: nobody else may close() that fd.
class Context final : public OpenDevice {
 public:
  ~Context() override;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // sysfs-backed queries follow the new name, which libibverbs's own device struct does not.
  void rename(const DeviceEntry& now) override;
  uint32_t num_ports() const override { return num_ports_; }
  int async_fd() const override;

  // ibv_get_async_event, copy, ibv_ack_async_event at once. kEmpty on EAGAIN.
  ReadResult read_event(RawEvent& out, int* error) override;
  uint64_t events_acked() const override { return events_acked_; }

  int query_port(uint32_t port, PortAttr& out) override;
  int query_gids(std::span<const uint32_t> gid_tbl_lens,
                 std::vector<std::vector<GidEntry>>& per_port) override;
  int query_pkeys(uint32_t port, uint32_t table_len, std::vector<uint16_t>& out) override;
  // ibv_query_port_speed where the loaded libibverbs has it (looked up at run time).
  EffectiveSpeed query_effective_speed(uint32_t port) override;

  int devx_fd() const override { return devx_channel_ ? devx_channel_->fd() : -1; }
  const DevxStatus& devx_status() const override { return devx_; }
  DevxRead read_devx(std::span<uint8_t, 72> out, int* error) override;

 private:
  friend class Catalog;
  Context(ibv_context* ctx, DeviceEntry entry, uint32_t num_ports, bool renamed);

  // The netdev of a RoCE GID entry, from sysfs (<ibdev_path>/ports/P/gid_attrs/ndevs/I), cached
  // per (port, index, ifindex) since names rarely change and sysfs reads are not free.
  std::string netdev_name(uint32_t port, uint32_t index, uint32_t ifindex);
  int read_sysfs_pkeys(uint32_t port, std::vector<uint16_t>& out);

  ibv_context* ctx_;
  uint32_t num_ports_;
  // ibv_query_pkey reads sysfs under the name libibverbs knows; once the device has another
  // name, P_Keys are read from entry_.ibdev_path directly.
  bool renamed_ = false;
  uint64_t events_acked_ = 0;
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::string> netdev_cache_;
  DevxStatus devx_;
  std::unique_ptr<DevxChannel> devx_channel_;  // reset before the context is closed
};

}  // namespace rdma_eventd::daemon::verbs
