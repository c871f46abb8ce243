// Fabric: the EQEs mlx5 firmware raises that only DEVX channels see (module, temperature and
// general events, any raw type), storms of them, and injected allocation failures.
#include "devx_names.h"
#include "fabric.h"

namespace rdmasim {

DeviceEntry& Fabric::devx_device(const std::string& name) {
  DeviceEntry& e = modifiable(name);
  if (!e.model.devx.is_mlx5())
    throw CommandError(
        "device " + name + " is a " +
        devx::name_of(devx::providers(), static_cast<uint32_t>(e.model.devx.provider)) +
        " device: only mlx5 firmware raises DEVX events");
  return e;
}

DevxDelivery Fabric::raise_eqe(const std::string& device, const devx::Eqe& eqe) {
  DeviceEntry& e = devx_device(device);
  // Without UCTX support the driver sets up no DEVX event table: the EQE reaches no channel.
  DevxCounts counts = e.model.devx.has_devx() ? channels_.deliver(e.index, eqe) : DevxCounts{};
  return DevxDelivery{e.model.name, eqe.type(), eqe.subtype(), counts};
}

std::pair<DeviceEntry*, uint8_t> Fabric::module_target(const std::string& target,
                                                       std::optional<uint8_t> module) {
  if (target.find('/') == std::string::npos) {
    DeviceEntry& e = devx_device(target);
    if (!module)
      throw CommandError("\"" + target + "\": name a port (DEV/PORT) or a module (--module N)");
    return {&e, *module};
  }
  if (module) throw CommandError("--module goes with a device, not a port (" + target + ")");
  auto [e, p] = port(target);
  devx_device(e->model.name);
  return {e, e->model.ports[p - 1].module};
}

uint64_t Fabric::devx_storm(const std::vector<DeviceEntry*>& devices,
                            const std::vector<uint8_t>& types, uint64_t count) {
  // Event i goes to device i % D with type (i / D) % K, like the verbs storm.
  uint64_t queued = 0;
  const uint64_t d = devices.size();
  for (uint64_t i = 0; i < count; ++i) {
    devx::Eqe eqe = devx::raw_eqe(types[(i / d) % types.size()], 0, {});
    devx::set_storm_sequence(eqe, i);
    queued += channels_.deliver(devices[i % d]->index, eqe).queued;
  }
  return queued;
}

std::vector<uint64_t> Fabric::destroy_channels(const std::string& device,
                                               std::optional<uint64_t> channel) {
  DeviceEntry& e = devx_device(device);
  std::vector<uint64_t> ids = channels_.destroy_channels(e.index, channel);
  if (ids.empty())
    throw CommandError(channel
                           ? "no open DEVX channel " + std::to_string(*channel) + " on " + device
                           : "no open DEVX channel on " + device);
  return ids;
}

std::vector<uint64_t> Fabric::fail_allocations(const std::string& device,
                                               std::optional<uint64_t> channel, uint64_t count) {
  DeviceEntry& e = devx_device(device);
  std::vector<uint64_t> armed = channels_.fail_allocations(e.index, channel, count);
  if (armed.empty())
    throw CommandError(channel
                           ? "no open DEVX channel " + std::to_string(*channel) + " on " + device +
                                 " that keeps event data (OMIT_EV_DATA channels "
                                 "allocate nothing)"
                           : "no open DEVX channel on " + device +
                                 " that keeps event data (OMIT_EV_DATA channels allocate "
                                 "nothing)");
  return armed;
}

}  // namespace rdmasim
