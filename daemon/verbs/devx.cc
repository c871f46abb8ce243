#include "verbs/devx.h"

#include <fcntl.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/devx_decode.h"

namespace rdma_eventd::daemon::verbs {
namespace {

// QUERY_HCA_CAP of one page. The kernel allows it on any mlx5 context (it is whitelisted);
// returns 0 or a positive errno, EREMOTEIO with the firmware's status in the reply.
int query_cap(ibv_context* ctx, uint16_t cap_type, std::vector<uint8_t>& reply) {
  const auto in = devx::query_hca_cap_command(cap_type);
  reply.assign(devx::kQueryHcaCapOutSize, 0);
  return mlx5dv_devx_general_cmd(ctx, in.data(), in.size(), reply.data(), reply.size());
}

std::string failure(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// The firmware's event capabilities, or nullopt with *devx set to why not.
std::optional<devx::EventCaps> read_caps(ibv_context* ctx, DevxStatus* devx) {
  std::vector<uint8_t> reply;
  devx::EventCaps caps;
  int err = query_cap(ctx, devx::kCapGeneral, reply);
  const auto event_cap = err == 0 ? devx::event_cap_from_reply(reply) : std::nullopt;
  if (!event_cap) {
    *devx = {DevxState::kFailed, {}, failure("QUERY_HCA_CAP (general)", err ? err : EPROTO)};
    return std::nullopt;
  }
  caps.event_cap = *event_cap;
  if (!caps.event_cap) {
    *devx = {DevxState::kNoEventCap,
             {},
             "firmware without event_cap allows only PORT_CHANGE, which the async events report"};
    return std::nullopt;
  }
  err = query_cap(ctx, devx::kCapDeviceEvent, reply);
  const auto mask = err == 0 ? devx::unaffiliated_from_reply(reply) : std::nullopt;
  if (!mask) {
    *devx = {DevxState::kFailed, {}, failure("QUERY_HCA_CAP (device events)", err ? err : EPROTO)};
    return std::nullopt;
  }
  caps.unaffiliated = *mask;
  return caps;
}

}  // namespace

ibv_context* open_context(ibv_device* dev, DevxStatus* devx, int* error) {
  ibv_context* ctx = nullptr;
  if (!mlx5dv_is_supported(dev)) {
    *devx = {DevxState::kNotMlx5, {}, "not an mlx5 device"};
  } else {
    mlx5dv_context_attr attr{};
    attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
    errno = 0;
    ctx = mlx5dv_open_device(dev, &attr);
    if (ctx) {
      *devx = {DevxState::kActive, {}, {}};
      return ctx;
    }
    *devx = {DevxState::kRefused, {}, failure("DEVX context refused", errno ? errno : EIO)};
  }
  errno = 0;
  ctx = ibv_open_device(dev);
  if (!ctx) *error = errno != 0 ? errno : EIO;
  return ctx;
}

std::unique_ptr<DevxChannel> DevxChannel::open(ibv_context* ctx, DevxStatus* devx) {
  const auto caps = read_caps(ctx, devx);
  if (!caps) return nullptr;
  std::vector<uint16_t> events = devx::events_to_subscribe(*caps);
  if (events.empty()) {
    *devx = {DevxState::kNoEvents,
             {},
             "the firmware's unaffiliated events mask has no module, temperature or general "
             "event"};
    return nullptr;
  }
  errno = 0;
  mlx5dv_devx_event_channel* raw =
      mlx5dv_devx_create_event_channel(ctx, static_cast<mlx5dv_devx_create_event_channel_flags>(0));
  if (!raw) {
    *devx = {DevxState::kFailed, {}, failure("creating the event channel", errno ? errno : EIO)};
    return nullptr;
  }
  std::unique_ptr<DevxChannel> channel(new DevxChannel(raw));
  const int flags = fcntl(raw->fd, F_GETFL);
  if (flags < 0 || fcntl(raw->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    *devx = {DevxState::kFailed, {}, failure("making the event channel non-blocking", errno)};
    return nullptr;
  }
  // At most 16 numbers per call (the kernel's MAX_NUM_EVENTS); there are three. events_sz is
  // in bytes. The cookie is not used: one channel per device, unaffiliated events only.
  const auto size = static_cast<uint16_t>(events.size() * sizeof(uint16_t));
  if (int err = mlx5dv_devx_subscribe_devx_event(raw, nullptr, size, events.data(), 0); err != 0) {
    *devx = {DevxState::kFailed, {}, failure("subscribing to events", errno ? errno : err)};
    return nullptr;
  }
  *devx = {DevxState::kActive, std::move(events), {}};
  return channel;
}

DevxChannel::~DevxChannel() {
  mlx5dv_devx_destroy_event_channel(channel_);
}

int DevxChannel::fd() const {
  return channel_->fd;
}

OpenDevice::DevxRead DevxChannel::read(std::span<uint8_t, 72> out, int* error) {
  static_assert(devx::kReadSize == 72);
  for (;;) {
    errno = 0;
    const ssize_t n = mlx5dv_devx_get_event(
        channel_, reinterpret_cast<mlx5dv_devx_async_event_hdr*>(out.data()), out.size());
    if (n == static_cast<ssize_t>(out.size())) return OpenDevice::DevxRead::kEvent;
    if (n >= 0) {
      // A data-mode channel returns whole events; a shorter one is not an event.
      *error = EPROTO;
      return OpenDevice::DevxRead::kError;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return OpenDevice::DevxRead::kEmpty;
    if (errno == EOVERFLOW) return OpenDevice::DevxRead::kOverflow;
    *error = errno;  // EINVAL (buffer too small) cannot happen with 72 bytes; EIO: destroyed
    return OpenDevice::DevxRead::kError;
  }
}

}  // namespace rdma_eventd::daemon::verbs
