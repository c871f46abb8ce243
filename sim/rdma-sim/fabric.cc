// Fabric: lookups, device lifecycle, raw events and storms.
#include "fabric.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "devx_names.h"
#include "rdma_eventd/internal/enum_names.h"

namespace rdmasim {

using nlohmann::json;

namespace {

const char* const kEventNames[] = {
    "cq_err",
    "qp_fatal",
    "qp_req_err",
    "qp_access_err",
    "comm_est",
    "sq_drained",
    "path_mig",
    "path_mig_err",
    "device_fatal",
    "port_active",
    "port_err",
    "lid_change",
    "pkey_change",
    "sm_change",
    "srq_err",
    "srq_limit_reached",
    "qp_last_wqe_reached",
    "client_reregister",
    "gid_change",
    "wq_fatal",
    "device_speed_change",  // kDeviceSpeedChange: the kernel's name, not libibverbs 44's
};

// Both indexed by DeviceState: live, fatal, removing.
const char* state_name(DeviceState s) {
  static constexpr std::array<const char*, 3> kNames = {"live", "fatal", "removal_pending"};
  return rdma_eventd::internal::enum_name(kNames, s, "unknown");
}

SlotState slot_state(DeviceState s) {
  static constexpr std::array<SlotState, 3> kSlots = {SlotState::kLive, SlotState::kFatal,
                                                      SlotState::kRemoving};
  return rdma_eventd::internal::enum_name(kSlots, s, SlotState::kFree);
}

json devx_json(const DevxModel& m, size_t channels) {
  json events = json::array();
  for (uint16_t n = 0; n <= devx::kMaxEventNumber; ++n)
    if (devx::mask_has(m.user_unaffiliated_events, n)) {
      const char* name = devx::name_of(devx::event_types(), n);
      events.push_back(name ? json(name) : json(n));
    }
  return {{"log_max_uctx", m.log_max_uctx},
          {"event_cap", m.event_cap},
          {"user_unaffiliated_events", events},
          {"port_module_event", m.port_module_event},
          {"temp_warn_event", m.temp_warn_event},
          {"general_notification_event", m.general_notification_event},
          {"channels", channels}};
}

// A port's counters by group, {"counters": {"symbol_error": 0, ...}, "hw_counters": {...}}, and
// the files given a fault, {"counter_faults": {"counters/symbol_error": "missing"}}; an Ethernet
// port's FEC mode, {"fec": "rs"}, and its netdev's PHY counters, {"ethtool": {...}}.
void add_counters_json(const Port& port, json* out) {
  json faults = json::object();
  for (const Counter& c : port.counters) {
    (*out)[group_dir(c.group)][c.name] = c.value;
    if (c.fault != CounterFault::kNone) faults[c.path()] = fault_name(c.fault);
  }
  if (!faults.empty()) (*out)["counter_faults"] = faults;
  if (!port.is_ethernet()) return;
  (*out)["fec"] = fec_mode_name(port.phy.fec);
  if (port.phy.supported())
    (*out)["ethtool"] = {{"fec_corrected_blocks", port.phy.fec_corrected_blocks},
                         {"fec_uncorrectable_blocks", port.phy.fec_uncorrectable_blocks},
                         {"fec_corrected_bits", port.phy.fec_corrected_bits},
                         {"symbol_errors", port.phy.symbol_errors}};
}

}  // namespace

const char* event_type_name(uint32_t type) {
  return type < std::size(kEventNames) ? kEventNames[type] : nullptr;
}

bool parse_event_type(const std::string& text, uint32_t* type) {
  for (uint32_t i = 0; i < std::size(kEventNames); ++i)
    if (text == kEventNames[i]) {
      *type = i;
      return true;
    }
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const unsigned long long v = std::stoull(text);
  if (v > UINT32_MAX) return false;
  *type = static_cast<uint32_t>(v);
  return true;
}

Fabric::Fabric(Topology topology, ShmRegion& shm, SysfsTree& sysfs, ContextRegistry& contexts,
               ChannelRegistry& channels, HotplugObserver& hotplug)
    : shm_(shm),
      sysfs_(sysfs),
      contexts_(contexts),
      channels_(channels),
      hotplug_(hotplug),
      netdevs_(std::move(topology.netdevs)),
      kernel_(topology.kernel) {
  for (const DeviceModel& d : topology.devices)
    register_device(d);
}

DeviceEntry* Fabric::find(const std::string& name) {
  for (DeviceEntry& e : devices_)
    if (e.model.name == name) return &e;
  return nullptr;
}

DeviceEntry* Fabric::find_index(int32_t index) {
  for (DeviceEntry& e : devices_)
    if (e.index == index) return &e;
  return nullptr;
}

DeviceEntry& Fabric::device(const std::string& name) {
  if (DeviceEntry* e = find(name)) return *e;
  if (unplugged_.count(name)) throw CommandError("device " + name + " is unplugged");
  throw CommandError("no device " + name);
}

DeviceEntry& Fabric::modifiable(const std::string& name) {
  DeviceEntry& e = device(name);
  if (e.state == DeviceState::kFatal)
    throw CommandError("device " + name + " is in fatal state: unplug and replug it first");
  if (e.state == DeviceState::kRemoving)
    throw CommandError("removal of device " + name + " is pending: it takes no more changes");
  return e;
}

std::pair<DeviceEntry*, int> Fabric::port(const std::string& target) {
  const size_t slash = target.find('/');
  if (slash == std::string::npos)
    throw CommandError("\"" + target + "\" is not a port: expected DEV/PORT, e.g. mlx5_0/1");
  DeviceEntry& e = device(target.substr(0, slash));
  const std::string num = target.substr(slash + 1);
  const size_t nports = e.model.ports.size();
  if (num.empty() || num.size() > 3 || num.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(num) < 1 || static_cast<size_t>(std::stoi(num)) > nports)
    throw CommandError("device " + e.model.name + " has no port " + num + " (ports 1.." +
                       std::to_string(nports) + ")");
  return {&e, std::stoi(num)};
}

int Fabric::free_slot() const {
  for (int s = 0; s < kMaxDevices; ++s)
    if (std::none_of(devices_.begin(), devices_.end(),
                     [s](const DeviceEntry& e) { return e.slot == s; }))
      return s;
  return -1;
}

uint32_t Fabric::free_uverbs() const {
  // The kernel takes the lowest free minor (ida_alloc).
  for (uint32_t n = 0;; ++n)
    if (std::none_of(devices_.begin(), devices_.end(),
                     [n](const DeviceEntry& e) { return e.uverbs == n; }))
      return n;
}

void Fabric::publish(const DeviceEntry& e) {
  shm_.publish(e.slot, e.model, slot_state(e.state), e.index, e.uverbs);
}

Delivery Fabric::deliver(const DeviceEntry& e, uint32_t type, uint64_t element) {
  return Delivery{e.model.name, type, element, contexts_.deliver(e.index, type, element), {}};
}

std::string Fabric::pci_function_of(uint64_t node_guid) {
  // Device numbers 02 to 1f of bus 00, then the functions of each: 240 in all, more than the
  // fabric's devices. A device keeps its function across unplug, replug and rename.
  auto [it, added] = pci_functions_.try_emplace(node_guid, static_cast<int>(pci_functions_.size()));
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:00:%02x.%x", 2 + it->second % 30, (it->second / 30) % 8);
  return buf;
}

void Fabric::register_device(const DeviceModel& model) {
  if (find(model.name)) throw CommandError("a device named " + model.name + " already exists");
  const int slot = free_slot();
  if (slot < 0)
    throw CommandError("the fabric is full (" + std::to_string(kMaxDevices) + " devices)");
  DeviceEntry e;
  e.model = model;
  const char* parent_driver = parent_driver_of(e.model.devx.provider);
  if (!e.model.sf_parent.empty() && e.model.pci_function.empty())
    e.model.pci_function = sf_function(e.model.sf_parent);
  if (e.model.pci_function.empty() && parent_driver)
    e.model.pci_function = pci_function_of(model.node_guid);
  assign_functions(e.model);
  e.original = e.model;
  e.index = next_index_++;  // never reused, like the kernel's device index
  e.uverbs = free_uverbs();
  e.slot = slot;
  // Kernel order: the ib_device's sysfs (device_add in ib_register_device), then its uverbs
  // char device, which is what libibverbs lists: a reader that lists the device (the shared
  // state) finds its sysfs whole, its parent's driver included.
  if (parent_driver) sysfs_.add_pci_function(e.model.pci_function, parent_driver);
  add_function_children(e.model);
  sysfs_.add_device(e.model, e.uverbs);
  publish(e);
  devices_.push_back(std::move(e));
  hotplug_.ib_device_added(devices_.back().model, devices_.back().index);
  hotplug_.uverbs_added(devices_.back().model, devices_.back().uverbs);
}

std::vector<Delivery> Fabric::unplug(const std::string& name, bool disassociate) {
  DeviceEntry& e = device(name);
  if (e.state == DeviceState::kRemoving)
    throw CommandError("removal of device " + name + " is already pending");
  const size_t pos = static_cast<size_t>(&e - devices_.data());
  // The device leaves the list and its uverbs char device goes first (no new opens).
  e.state = DeviceState::kRemoving;
  publish(e);
  sysfs_.remove_uverbs(e.uverbs);
  hotplug_.uverbs_removed(e.model, e.uverbs);
  std::vector<Delivery> out;
  if (disassociate) {
    // Every command on the device's contexts fails from now on; each context learns it from one
    // DEVICE_FATAL (element 0), its last event ever. Its DEVX channels are destroyed with it.
    shm_.free_slot(e.slot);
    sysfs_.remove_device(e.model.name);
    channels_.destroy_device(e.index);
    out.push_back(deliver(e, IBV_EVENT_DEVICE_FATAL, 0));
    contexts_.silence(e.index);
    finish_removal(pos);
  } else if (contexts_.open_count(e.index) == 0) {
    finish_removal(pos);
  }
  return out;
}

void Fabric::finish_removal(size_t position) {
  DeviceEntry e = std::move(devices_[position]);
  devices_.erase(devices_.begin() + static_cast<std::ptrdiff_t>(position));
  shm_.free_slot(e.slot);
  sysfs_.remove_device(e.model.name);
  remove_function_children(e.model);
  hotplug_.ib_device_removed(e.model, e.index);
  e.original.name = e.model.name;
  if (!function_stays_) {  // mlx5_adev_idx_free: the functions are gone
    e.original.adev_index = -1;
    for (LagMember& m : e.original.lag)
      m.adev_index = -1;
  }
  unplugged_[e.model.name] = std::move(e.original);
}

std::optional<std::string> Fabric::context_closed(int32_t index) {
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].index == index && devices_[i].state == DeviceState::kRemoving &&
        contexts_.open_count(index) == 0) {
      std::string name = devices_[i].model.name;
      finish_removal(i);
      return name;
    }
  return std::nullopt;
}

bool Fabric::removal_pending(const std::string& name) const {
  return std::any_of(devices_.begin(), devices_.end(), [&](const DeviceEntry& e) {
    return e.model.name == name && e.state == DeviceState::kRemoving;
  });
}

void Fabric::replug(const std::string& name) {
  if (const DeviceEntry* e = find(name)) {
    if (e->state == DeviceState::kRemoving)
      throw CommandError("removal of device " + name + " is still pending (" +
                         std::to_string(contexts_.open_count(e->index)) + " contexts open)");
    throw CommandError("device " + name + " is plugged in");
  }
  auto it = unplugged_.find(name);
  if (it == unplugged_.end()) throw CommandError("no unplugged device " + name);
  DeviceModel model = it->second;
  register_device(model);
  unplugged_.erase(name);
}

void Fabric::rename(const std::string& name, const std::string& new_name) {
  DeviceEntry& e = device(name);
  if (e.state == DeviceState::kRemoving)
    throw CommandError("removal of device " + name + " is pending");
  if (new_name.empty() || new_name.size() >= static_cast<size_t>(kNameMax) ||
      new_name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos)
    throw CommandError("\"" + new_name +
                       "\" is not a valid device name (letters, digits, '_', '-', '.')");
  if (new_name == name) throw CommandError("device " + name + " already has that name");
  if (find(new_name)) throw CommandError("a device named " + new_name + " already exists");
  const std::string old_name = e.model.name;
  e.model.name = new_name;
  publish(e);
  sysfs_.rename_device(old_name, new_name, e.uverbs);
  hotplug_.ib_device_renamed(old_name, e.model, e.index);
}

std::vector<Delivery> Fabric::fatal(const std::string& name, uint64_t element) {
  DeviceEntry& e = modifiable(name);
  e.state = DeviceState::kFatal;
  publish(e);
  return {deliver(e, IBV_EVENT_DEVICE_FATAL, element)};
}

Delivery Fabric::raw_event(const std::string& target, uint32_t type,
                           std::optional<uint64_t> element, std::optional<uint64_t> context_id) {
  DeviceEntry* e;
  uint64_t elem = 0;
  if (target.find('/') != std::string::npos) {
    auto [dev, port_num] = port(target);
    e = dev;
    elem = static_cast<uint64_t>(port_num);
  } else {
    e = &device(target);
  }
  if (element) elem = *element;
  if (context_id) {
    if (!contexts_.deliver_to(*context_id, e->index, type, elem))
      throw CommandError("no open context " + std::to_string(*context_id) + " on device " +
                         e->model.name);
    return Delivery{e->model.name, type, elem, 1, {}};
  }
  return deliver(*e, type, elem);
}

uint64_t Fabric::storm(const std::vector<std::pair<DeviceEntry*, int>>& targets,
                       const std::vector<uint32_t>& types, uint64_t count) {
  // Event i goes to target i % T with type (i / T) % K: every target sees the types in turn.
  uint64_t deliveries = 0;
  const uint64_t t = targets.size();
  for (uint64_t i = 0; i < count; ++i) {
    const auto& [e, port_num] = targets[i % t];
    deliveries +=
        contexts_.deliver(e->index, types[(i / t) % types.size()], static_cast<uint64_t>(port_num));
  }
  return deliveries;
}

json Fabric::show(const std::string& only) const {
  json devices = json::array();
  for (const DeviceEntry& e : devices_) {
    if (!only.empty() && e.model.name != only) continue;
    const DeviceModel& d = e.model;
    json ports = json::array();
    for (size_t p = 0; p < d.ports.size(); ++p) {
      const Port& port = d.ports[p];
      const ibv_port_attr& a = port.attr;
      json gids = json::array();
      for (size_t i = 0; i < port.gids.size(); ++i) {
        const Gid& g = port.gids[i];
        if (!g.valid) continue;
        json gid = {{"index", i}, {"gid", gid_to_text(g.raw)}, {"type", gid_type_name(g.type)}};
        if (!g.netdev.empty()) gid["netdev"] = g.netdev, gid["ifindex"] = g.ifindex;
        gids.push_back(gid);
      }
      json pkeys = json::array();
      for (size_t i = 0; i < port.pkeys.size(); ++i)
        if (port.pkeys[i]) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "0x%04x", port.pkeys[i]);
          pkeys.push_back({{"index", i}, {"pkey", buf}});
        }
      json pj = {{"port", p + 1},
                 {"link_layer", port.is_ethernet() ? "ethernet" : "infiniband"},
                 {"state", port_state_name(a.state)},
                 {"phys_state", phys_state_name(a.phys_state)},
                 {"lid", a.lid},
                 {"sm_lid", a.sm_lid},
                 {"sm_sl", a.sm_sl},
                 {"lmc", a.lmc},
                 {"width", width_name(a.active_width)},
                 {"speed", speed_name(port.speed)},
                 {"gid_tbl_len", a.gid_tbl_len},
                 {"pkey_tbl_len", a.pkey_tbl_len},
                 {"gids", gids},
                 {"pkeys", pkeys}};
      if (!port.netdev.empty()) pj["netdev"] = port.netdev;
      if (d.devx.is_mlx5()) pj["module"] = port.module;
      add_counters_json(port, &pj);
      ports.push_back(pj);
    }
    json dev = {
        {"name", d.name},
        {"index", e.index},
        {"uverbs", "uverbs" + std::to_string(e.uverbs)},
        {"node_guid", guid_to_string(d.node_guid)},
        {"state", state_name(e.state)},
        {"open_contexts", contexts_.open_count(e.index)},
        {"provider", devx::name_of(devx::providers(), static_cast<uint32_t>(d.devx.provider))},
        {"counters", pma_counters_name(d.counters.pma)},
        {"hw_counters", hw_counters_name(d.counters.hw)},
        {"ports", ports}};
    if (d.devx.is_mlx5()) dev["devx"] = devx_json(d.devx, channels_.open_count(e.index));
    devices.push_back(dev);
  }
  json unplugged = json::array();
  for (const auto& [name, model] : unplugged_)
    if (only.empty() || name == only) unplugged.push_back(name);
  return {{"devices", devices}, {"unplugged", unplugged}};
}

}  // namespace rdmasim
