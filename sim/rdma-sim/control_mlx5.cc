// What mlx5 does around its fw_fatal reporter (docs/simulator.md, "mlx5's fw_fatal recovery and
// reloads"), and `rdma-sim reload DEV`, the driver unbound and bound again.
//
// A fw_fatal report (drivers/net/ethernet/mellanox/mlx5/core/health.c): the health poll sees the
// syndrome, mlx5_enter_error_state() notifies MLX5_DEV_EVENT_SYS_ERROR and mlx5_ib dispatches
// IB_EVENT_DEVICE_FATAL (port 1); mlx5_fw_fatal_reporter_err_work() then reports. Its recover
// operation, run inside devlink_health_report(), unloads and loads the function
// (mlx5_health_try_recover -> mlx5_recover_device: mlx5_unload_one, mlx5_load_one): the RDMA
// device is unregistered and registered again before the HEALTHY notification. A report the
// devlink core aborts (-ECANCELED: in error, or within the grace period) makes the driver unload
// ("Driver is in error state. Unloading"): the RDMA device goes, pci/ stays, in error.
#include <cerrno>

#include "devx_reply.h"
#include "request_fields.h"
#include "simulator.h"

namespace rdmasim {

using nlohmann::json;

namespace {

// Sets the fabric and the devlink reporters to "the function stays" for its lifetime.
class FunctionStays {
 public:
  FunctionStays(Fabric& f, DevlinkHealth& d) : f_(f), d_(d) {
    f_.function_stays(true);
    d_.function_stays(true);
  }
  ~FunctionStays() {
    f_.function_stays(false);
    d_.function_stays(false);
  }
  FunctionStays(const FunctionStays&) = delete;
  FunctionStays& operator=(const FunctionStays&) = delete;

 private:
  Fabric& f_;
  DevlinkHealth& d_;
};

void append(std::vector<Delivery>& to, const std::vector<Delivery>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

Mlx5Fatal Simulator::mlx5_fatal_of(const DevlinkHealth::Address& address) {
  Mlx5Fatal f;
  if (address.name != "fw_fatal" || address.port) return f;
  const auto [handle, device] = devlink_.instance_of(address);
  const DeviceEntry* e = fabric_->find(device);
  const bool own = handle.rfind("pci/", 0) == 0 || handle.rfind("auxiliary/mlx5_core.sf.", 0) == 0;
  if (device.empty() || !own || !e || !e->model.devx.is_mlx5()) return f;
  f.device = device;
  return f;
}

void Simulator::enter_error_state(Mlx5Fatal& f) {
  const DeviceEntry* e = f.device.empty() ? nullptr : fabric_->find(f.device);
  // A device in error already (or going) gets no second one.
  if (e && e->state == DeviceState::kLive) f.entered = fabric_->fatal(f.device, 1);
}

std::vector<Delivery> Simulator::function_reload(const std::string& device, bool load) {
  FunctionStays stays(*fabric_, devlink_);
  // mlx5_unload_one: mlx5_ib's auxiliary device is deleted (it has no suspend): the RDMA
  // device is unregistered, its contexts disassociated.
  std::vector<Delivery> out = fabric_->unplug(device, /*disassociate=*/true);
  if (load) fabric_->replug(device);  // mlx5_load_one: added back
  return out;
}

DevlinkHealth::DriverRecover Simulator::mlx5_recover(Mlx5Fatal& f) {
  if (f.device.empty()) return {};
  return [this, &f](const std::string& device) {
    append(f.reload, function_reload(device, /*load=*/true));
    return 0;
  };
}

void Simulator::unload_in_error(Mlx5Fatal& f) {
  if (f.device.empty() || !fabric_->find(f.device)) return;
  append(f.reload, function_reload(f.device, /*load=*/false));
}

json Simulator::handle_reload(const json& req) {
  const std::string name = need<std::string>(req, "device");
  if (!fabric_->find(name)) {
    // Unloaded in error (or unplugged): binding the driver again probes the function anew.
    fabric_->replug(name);
    const DeviceEntry& back = fabric_->device(name);
    return {{"ok", true},
            {"message", name + ": driver bound, plugged in as index " + std::to_string(back.index) +
                            ", uverbs" + std::to_string(back.uverbs)},
            {"index", back.index},
            {"events", json::array()}};
  }
  DeviceEntry& e = fabric_->device(name);
  if (!e.model.devx.is_mlx5() || e.model.pci_function.empty())
    throw CommandError(name + " is no mlx5 device: reload models mlx5_core's unbind and bind");
  // remove_one, then probe_one: the function's instances and reporters go and come back new,
  // with no health notification; the RDMA device goes first and is back last (the orders of
  // "mlx5's sysfs and devlink layout").
  const std::vector<Delivery> gone = fabric_->unplug(name, /*disassociate=*/true);
  if (fabric_->removal_pending(name))
    throw CommandError(name + ": removal pending");  // cannot happen: disassociated
  fabric_->replug(name);
  const DeviceEntry& back = fabric_->device(name);
  json reply = {
      {"ok", true},
      {"message", name + ": driver reloaded, plugged in as index " + std::to_string(back.index) +
                      ", uverbs" + std::to_string(back.uverbs)},
      {"index", back.index},
      {"events", events_json(gone)}};
  return reply;
}

}  // namespace rdmasim
