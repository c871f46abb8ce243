// The devlink instances and ports of the simulated devices, as mlx5 builds them for the kernel
// release of the topology (docs/simulator.md, "mlx5's sysfs and devlink layout"), and the
// notifications their registration and unregistration send (net/devlink/leftover.c in 6.1:
// devlink_notify_register, devlink_notify_unregister, devlink_port_notify).
#include <linux/devlink.h>

#include <algorithm>
#include <cstdlib>

#include "devlink_health.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// drivers/net/ethernet/mellanox/mlx5/core/health.c (6.1): a PF's fw_fatal grace period (an
// ECPF has 180 s, a VF or SF 30 s; every simulated device is a PF); fw has no recover.
constexpr uint64_t kMlx5FwFatalGraceMs = 60000;
constexpr uint64_t kMlx5SfFwFatalGraceMs = 30000;  // MLX5_FW_REPORTER_DEFAULT_GRACEFUL_PERIOD
// en/reporter_tx.c, en/reporter_rx.c: MLX5_REPORTER_TX_GRACEFUL_PERIOD and the rx one.
constexpr uint64_t kMlx5QueueGraceMs = 500;
constexpr uint16_t kMlx5VportUplink = 0xffff;

// The vhca id firmware gives a function: here its ordinal among the fabric's PCI functions
// (PF0 0, PF1 1, ...), from "0000:00:DD.F".
uint32_t vhca_id(const std::string& function) {
  if (function.size() != 12) return 0;
  const auto dev = std::strtoul(function.substr(8, 2).c_str(), nullptr, 16);
  const auto fn = std::strtoul(function.substr(11, 1).c_str(), nullptr, 16);
  return static_cast<uint32_t>((dev >= 2 ? dev - 2 : 0) + 30 * fn);
}

// mlx5e's devlink port for its netdev, the uplink of a PF (mlx5e_devlink_port_register):
// flavour physical, number mlx5_get_dev_index() (the PF's number), index
// mlx5_esw_vport_to_devlink_port_index(MLX5_VPORT_UPLINK) = vhca_id << 16 | 0xffff.
DevlinkPort uplink(const std::string& function, const std::string& netdev, uint32_t ifindex,
                   uint32_t number) {
  return DevlinkPort{.index = (vhca_id(function) << 16) | kMlx5VportUplink,
                     .type = DEVLINK_PORT_TYPE_ETH,
                     .flavour = DEVLINK_PORT_FLAVOUR_PHYSICAL,
                     .number = number,
                     .netdev = netdev,
                     .ifindex = ifindex};
}

// One PCI function of a device as mlx5 sees it: a RoCE LAG device has one per member PF.
struct Function {
  std::string pci;
  int adev_index = -1;
  bool ethernet = false;
  std::optional<DevlinkPort> port;  // its uplink port, when it has a faithful one
};

bool has_ethernet_port(const DeviceModel& d) {
  return std::any_of(d.ports.begin(), d.ports.end(), [](const Port& p) { return p.is_ethernet(); });
}

std::vector<Function> functions_of(const DeviceModel& d) {
  std::vector<Function> out;
  if (!d.lag.empty()) {
    for (size_t n = 0; n < d.lag.size(); ++n) {
      const LagMember& m = d.lag[n];
      out.push_back({m.pci_function, m.adev_index, true,
                     uplink(m.pci_function, m.netdev, m.ifindex, static_cast<uint32_t>(n))});
    }
    return out;
  }
  Function f{d.pci_function, d.adev_index, has_ethernet_port(d), std::nullopt};
  // A scalable function's instance is on its auxiliary device (mlx5_sf_dev_probe: the SF's
  // mlx5_core allocates its devlink on &adev->dev); its mlx5e is not modelled.
  if (d.sf_id >= 0) {
    f.ethernet = false;
    out.push_back(f);
    return out;
  }
  // A function has one Ethernet port; a simulated device with more ports than that has no
  // faithful devlink port, and gets none.
  if (d.devx.is_mlx5() && d.ports.size() == 1 && d.ports[0].is_ethernet())
    f.port =
        uplink(d.pci_function, d.ports[0].netdev, d.ports[0].netdev_ifindex,
               static_cast<uint32_t>(std::strtoul(d.pci_function.substr(11).c_str(), nullptr, 16)));
  out.push_back(f);
  return out;
}

json port_json(const DevlinkPort& p) {
  static constexpr const char* kTypes[] = {"notset", "auto", "eth", "ib"};
  json j = {{"index", p.index},
            {"type", p.type < std::size(kTypes) ? kTypes[p.type] : "unknown"},
            {"flavour", p.flavour == DEVLINK_PORT_FLAVOUR_PHYSICAL ? "physical" : "other"},
            {"number", p.number}};
  if (!p.netdev.empty()) j["netdev"] = p.netdev, j["ifindex"] = p.ifindex;
  return j;
}

}  // namespace

std::vector<DevlinkReporterSpec> DevlinkHealth::driver_reporters(const DeviceModel& d) const {
  std::vector<DevlinkReporterSpec> out;
  if (d.devx.is_mlx5()) {
    // mlx5_fw_reporters_create: fw (dump, no recover), fw_fatal (both).
    out.push_back({"fw", /*recover=*/false, /*dump=*/true, 0, -1});
    out.push_back(
        {"fw_fatal", true, true, d.sf_id < 0 ? kMlx5FwFatalGraceMs : kMlx5SfFwFatalGraceMs, -1});
    // diag/reporter_vnic.c (2023, "to PFs/VFs"): diagnose only, no recover, no dump.
    if (kernel_.at_least(6, 5) && d.sf_id < 0) out.push_back({"vnic", false, false, 0, -1});
  }
  return out;
}

void DevlinkHealth::add_device(const DeviceModel& d) {
  if (d.pci_function.empty()) return;
  const bool mlx5 = d.devx.is_mlx5();
  if (!mlx5 && d.devlink_reporters.empty()) return;
  std::vector<std::pair<DevlinkInstance, std::optional<DevlinkInstance>>> built;
  for (const Function& f : functions_of(d)) {
    DevlinkInstance pci{
        d.sf_id < 0 ? "pci" : "auxiliary", d.sf_id < 0 ? f.pci : d.parent_subdir(), d.name, {}, {}};
    for (const DevlinkReporterSpec& s : driver_reporters(d))
      pci.reporters.push_back(created_reporter(s));
    if (mlx5) {
      // mlx5_devlink_ops: .reload_actions driver_reinit and fw_activate, limit no_reset.
      pci.reload_actions =
          (1 << DEVLINK_RELOAD_ACTION_DRIVER_REINIT) | (1 << DEVLINK_RELOAD_ACTION_FW_ACTIVATE);
      pci.reload_no_reset = true;
    }
    // mlx5e creates tx and rx on its port (mlx5e_reporter_tx_create, _rx_create). From 6.2
    // (ee75f1fc44dd) port and reporters are on mlx5e's own instance, on its auxiliary device
    // (mlx5e_probe); mlx5e has no reload operations. Before, on the function's.
    std::optional<DevlinkInstance> eth;
    DevlinkInstance* port_owner = &pci;
    if (mlx5 && kernel_.at_least(6, 2) && f.ethernet && f.adev_index >= 0) {
      eth = DevlinkInstance{
          "auxiliary", "mlx5_core.eth." + std::to_string(f.adev_index), d.name, {}, {}};
      port_owner = &*eth;
    }
    if (f.port) {
      port_owner->reporters.push_back(created_reporter(
          {"tx", true, true, kMlx5QueueGraceMs, static_cast<int64_t>(f.port->index)}));
      port_owner->reporters.push_back(created_reporter(
          {"rx", true, true, kMlx5QueueGraceMs, static_cast<int64_t>(f.port->index)}));
      port_owner->ports.push_back(*f.port);
    }
    built.emplace_back(std::move(pci), std::move(eth));
  }
  // The topology's reporters are on the first function's instance.
  for (const DevlinkReporterSpec& s : d.devlink_reporters)
    built.front().first.reporters.push_back(created_reporter(s));
  if (function_stays_) {
    // mlx5_load_one: pci/ and its reporters stayed; from 6.4 mlx5e's auxiliary device was
    // deleted with the rest and is added back (mlx5_attach_device), with a new instance.
    for (auto& [pci, eth] : built)
      if (eth && kernel_.at_least(6, 4)) register_instance(std::move(*eth));
    return;
  }
  // Instances an unload left (a fw_fatal in the grace period) go before the new probe's.
  unregister_instances(d.name, "");
  // Before 6.3 probe_one registers pci/ last (devlink_register after mlx5_init_one, which
  // probes the auxiliary devices); from 6.3 (fe578cbb2f05) first. Functions in probe order.
  const bool pci_first = !mlx5 || kernel_.at_least(6, 3);
  for (auto& [pci, eth] : built) {
    if (pci_first) register_instance(std::move(pci));
    if (eth) register_instance(std::move(*eth));
    if (!pci_first) register_instance(std::move(pci));
  }
}

void DevlinkHealth::register_instance(DevlinkInstance i) {
  instances_.push_back(std::move(i));
  const DevlinkInstance& in = instances_.back();
  notify_object(DEVLINK_CMD_NEW, in, nullptr);
  for (const DevlinkPort& p : in.ports) {
    if (in.bus != "auxiliary") {
      // Registered with the instance, its type and netdev set already: devlink_notify_register
      // sends each port as it is.
      notify_object(DEVLINK_CMD_PORT_NEW, in, &p);
      continue;
    }
    // mlx5e's instance is registered before its port (mlx5e_create_devlink, then
    // mlx5e_devlink_port_register), and the port before its netdev: PORT_NEW at
    // devl_port_register (type notset), at NETDEV_POST_INIT (eth, no netdev yet) and at
    // NETDEV_REGISTER (the netdev) (devlink_port_netdevice_event).
    DevlinkPort step = p;
    step.type = DEVLINK_PORT_TYPE_NOTSET;
    step.netdev.clear();
    step.ifindex = 0;
    port_changed(in, step);
    step.type = p.type;
    port_changed(in, step);
    port_changed(in, p);
  }
}

void DevlinkHealth::port_changed(const DevlinkInstance& i, const DevlinkPort& p) {
  notify_object(DEVLINK_CMD_PORT_NEW, i, &p);
}

void DevlinkHealth::unregister_instances(const std::string& rdma_device,
                                         const std::string& bus_only) {
  // Later instances first, each one's ports in reverse (devlink_notify_unregister).
  for (size_t n = instances_.size(); n-- > 0;) {
    DevlinkInstance& i = instances_[n];
    if (i.rdma_device != rdma_device || (!bus_only.empty() && i.bus != bus_only)) continue;
    for (auto p = i.ports.rbegin(); p != i.ports.rend(); ++p) {
      if (i.bus == "auxiliary") {
        // mlx5e_remove: unregister_netdev (NETDEV_UNREGISTER: no netdev; NETDEV_PRE_UNINIT:
        // type notset), then the port, then the instance.
        DevlinkPort step = *p;
        step.netdev.clear();
        step.ifindex = 0;
        port_changed(i, step);
        step.type = DEVLINK_PORT_TYPE_NOTSET;
        port_changed(i, step);
        notify_object(DEVLINK_CMD_PORT_DEL, i, &step);
        continue;
      }
      notify_object(DEVLINK_CMD_PORT_DEL, i, &*p);
    }
    notify_object(DEVLINK_CMD_DEL, i, nullptr);
    instances_.erase(instances_.begin() + static_cast<std::ptrdiff_t>(n));
  }
}

void DevlinkHealth::remove_device(const std::string& rdma_device) {
  unregister_instances(rdma_device, "");
}

void DevlinkHealth::uverbs_removed(const DeviceModel& d, uint32_t) {
  if (function_stays_) return;
  // Before 6.3 remove_one unregisters pci/ before the RDMA device goes; other drivers' too.
  if (!d.devx.is_mlx5() || !kernel_.at_least(6, 3)) unregister_instances(d.name, "pci");
}

void DevlinkHealth::ib_device_removed(const DeviceModel& d, int32_t) {
  if (function_stays_) {
    // mlx5_unload_one: before 6.4 mlx5e is suspended (its instance stays), from 6.4 removed.
    if (kernel_.at_least(6, 4)) unregister_instances(d.name, "auxiliary");
    return;
  }
  // Then the auxiliary devices (rdma before eth), then from 6.3 pci/.
  unregister_instances(d.name, "auxiliary");
  unregister_instances(d.name, "");
}

void DevlinkHealth::notify_object(uint8_t command, const DevlinkInstance& i,
                                  const DevlinkPort* port) {
  if (!notify_object_) return;
  notify_object_(DevlinkObject{.command = command,
                               .bus = i.bus,
                               .device = i.device,
                               .reload_actions = i.reload_actions,
                               .reload_no_reset = i.reload_no_reset,
                               .port = port ? std::optional(*port) : std::nullopt});
}

std::vector<DevlinkObject> DevlinkHealth::port_dump() const {
  std::vector<DevlinkObject> out;
  for (const DevlinkInstance& i : instances_) {
    std::vector<DevlinkPort> ports = i.ports;
    std::sort(ports.begin(), ports.end(),
              [](const DevlinkPort& a, const DevlinkPort& b) { return a.index < b.index; });
    for (const DevlinkPort& p : ports)
      out.push_back({DEVLINK_CMD_NEW, i.bus, i.device, i.reload_actions, i.reload_no_reset, p});
  }
  return out;
}

json DevlinkHealth::instances_json(const std::string& only) const {
  json out = json::array();
  for (const DevlinkInstance& i : instances_) {
    if (!only.empty() && only != i.handle() && only != i.rdma_device) continue;
    json ports = json::array();
    for (const DevlinkPort& p : i.ports)
      ports.push_back(port_json(p));
    out.push_back({{"handle", i.handle()},
                   {"device", i.rdma_device},
                   {"reporters", i.reporters.size()},
                   {"ports", ports}});
  }
  return out;
}

}  // namespace rdmasim
