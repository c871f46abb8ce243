// The daemon's only contact with libmlx5 (mlx5 direct verbs): opening an mlx5 device as a DEVX
// context, reading the firmware's event capabilities, and the DEVX event channel that delivers
// module, temperature and general events (mlx5dv_devx_get_event(3)). What the bytes mean is
// core/devx_decode's.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/device_view.h"
#include "core/devx_status.h"

struct ibv_context;
struct ibv_device;
struct mlx5dv_devx_event_channel;

namespace rdma_eventd::daemon::verbs {

// Opens `dev`. An mlx5 device is opened as a DEVX context (which is also its verbs context: one
// async fd per device); when DEVX is refused, or for another provider, as a plain verbs context.
// *devx says which (kActive meaning "DEVX context, channel not set up yet"). nullptr and *error
// when the device cannot be opened at all.
ibv_context* open_context(ibv_device* dev, DevxStatus* devx, int* error);

// One event channel in data mode (72-byte events, EOVERFLOW reported), non-blocking, subscribed
// without an object to the events that matter that the firmware allows. Destroyed before the
// context that made it.
class DevxChannel {
 public:
  // Sets up the channel of a DEVX context. nullptr, with *devx saying why, when the firmware
  // allows none of the events or a step fails; *devx is kActive with the events otherwise.
  static std::unique_ptr<DevxChannel> open(ibv_context* ctx, DevxStatus* devx);
  ~DevxChannel();
  DevxChannel(const DevxChannel&) = delete;
  DevxChannel& operator=(const DevxChannel&) = delete;

  int fd() const;
  OpenDevice::DevxRead read(std::span<uint8_t, 72> out, int* error);

 private:
  explicit DevxChannel(mlx5dv_devx_event_channel* channel) : channel_(channel) {}
  mlx5dv_devx_event_channel* channel_;
};

}  // namespace rdma_eventd::daemon::verbs
