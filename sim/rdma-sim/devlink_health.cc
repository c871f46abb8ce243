#include "devlink_health.h"

#include <linux/devlink.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "fabric.h"

namespace rdmasim {

using nlohmann::json;

DevlinkReporter created_reporter(const DevlinkReporterSpec& spec) {
  DevlinkReporter r;
  r.spec = spec;
  r.auto_recover = spec.recover;  // __devlink_health_reporter_create: !!ops->recover
  r.auto_dump = spec.dump;
  return r;
}

namespace {

json reporter_json(const DevlinkInstance& i, const DevlinkReporter& r) {
  json j = {{"handle", i.handle()},
            {"device", i.rdma_device},
            {"reporter", r.spec.name},
            {"state", r.state == 0 ? "healthy" : "error"},
            {"error_count", r.error_count},
            {"recover_count", r.recovery_count},
            {"recover", r.spec.recover},
            {"auto_recover", r.auto_recover},
            {"grace_period_ms", r.spec.grace_period_ms},
            {"auto_dump", r.auto_dump},
            {"dumped", r.dumped}};
  if (r.spec.port_index >= 0) j["port_index"] = r.spec.port_index;
  return j;
}

}  // namespace

DevlinkHealth::DevlinkHealth(Clock monotonic_ms, Clock real_ns, Notify notify)
    : monotonic_ms_(std::move(monotonic_ms)),
      real_ns_(std::move(real_ns)),
      notify_(std::move(notify)) {}

void DevlinkHealth::rename_device(const std::string& old_name, const std::string& new_name) {
  for (DevlinkInstance& i : instances_)
    if (i.rdma_device == old_name) i.rdma_device = new_name;
}

void DevlinkHealth::add_instance(const std::string& bus, const std::string& device,
                                 const std::vector<DevlinkReporterSpec>& reporters) {
  DevlinkInstance i{bus, device, "", {}, {}};
  for (const DevlinkReporterSpec& s : reporters)
    i.reporters.push_back(created_reporter(s));
  // netdevsim's reload operations (driver_reinit), as its captured DEVLINK_CMD_NEW lists them.
  i.reload_actions = 1 << DEVLINK_RELOAD_ACTION_DRIVER_REINIT;
  register_instance(std::move(i));
}

DevlinkInstance* DevlinkHealth::instance(const std::string& handle) {
  for (DevlinkInstance& i : instances_)
    if (i.handle() == handle) return &i;
  return nullptr;
}

DevlinkHealth::Found DevlinkHealth::find(const Address& a) {
  // The instance a handle names, else every instance of the RDMA device of that name (an
  // Ethernet function's pci/ and, from 6.2, auxiliary/ ones).
  std::vector<DevlinkInstance*> in;
  if (DevlinkInstance* named_one = instance(a.target))
    in.push_back(named_one);
  else
    for (DevlinkInstance& i : instances_)
      if (!i.rdma_device.empty() && i.rdma_device == a.target) in.push_back(&i);
  if (in.empty())
    throw CommandError("no devlink instance " + a.target +
                       " (an mlx5 device's name, or a handle such as pci/0000:00:02.0)");
  const std::string where = in.size() == 1 ? in.front()->handle() : a.target;
  const auto named = [&](const DevlinkInstance& i, const DevlinkReporter& r) {
    return (in.size() == 1 ? "" : i.handle() + " ") + r.spec.name +
           (r.spec.port_index < 0 ? "" : " (port " + std::to_string(r.spec.port_index) + ")");
  };
  const auto list = [&] {
    std::string names;
    for (const DevlinkInstance* i : in)
      for (const DevlinkReporter& r : i->reporters)
        names += (names.empty() ? "" : ", ") + named(*i, r);
    return names.empty() ? " (it has none)" : " (it has " + names + ")";
  };
  if (a.port) {
    for (DevlinkInstance* i : in)
      for (DevlinkReporter& r : i->reporters)
        if (r.spec.name == a.name && r.spec.port_index == *a.port) return {*i, r};
    throw CommandError(where + " port " + std::to_string(*a.port) + " has no reporter " + a.name +
                       list());
  }
  // An instance's own reporter first, as `devlink health` without a port looks it up; else
  // the one port reporter of that name.
  for (DevlinkInstance* i : in)
    for (DevlinkReporter& r : i->reporters)
      if (r.spec.name == a.name && r.spec.port_index < 0) return {*i, r};
  std::vector<Found> on_ports;
  for (DevlinkInstance* i : in)
    for (DevlinkReporter& r : i->reporters)
      if (r.spec.name == a.name) on_ports.push_back({*i, r});
  if (on_ports.size() == 1) return on_ports.front();
  if (on_ports.size() > 1)
    throw CommandError(where + " has a reporter " + a.name +
                       " on several ports: say which with --port" + list());
  throw CommandError(where + " has no reporter " + a.name + list());
}

void DevlinkHealth::notify(const DevlinkInstance& i, const DevlinkReporter& r, int* count) {
  ++*count;
  notify_(DevlinkFill{i.bus, i.device, r});
}

int DevlinkHealth::do_recover(DevlinkInstance& i, DevlinkReporter& r, int recovery_error,
                              const DriverRecover& driver, Outcome* o) {
  o->reporter = r;
  if (r.state == 0) return 0;
  if (!r.spec.recover) return EOPNOTSUPP;
  if (recovery_error) return recovery_error;  // left in error, nothing sent
  if (driver) {
    // The driver's recover operation runs inside the report (mlx5's unloads and loads the
    // function): it may unregister and register instances, so the reporter is looked up again.
    const Address self{
        i.handle(), r.spec.name,
        r.spec.port_index < 0 ? std::nullopt : std::optional<int64_t>(r.spec.port_index)};
    if (const int error = driver(i.rdma_device)) return error;
    auto [again_i, again_r] = find(self);
    return finish_recovery(again_i, again_r, o);
  }
  return finish_recovery(i, r, o);
}

int DevlinkHealth::finish_recovery(DevlinkInstance& i, DevlinkReporter& r, Outcome* o) {
  // devlink_health_reporter_recovery_done(), then HEALTHY and the notification.
  ++r.recovery_count;
  r.last_recovery_ms = monotonic_ms_();
  if (r.last_recovery_ms == 0) r.last_recovery_ms = 1;  // the kernel's 0 means "never"
  r.state = 0;
  notify(i, r, &o->notifications);
  o->reporter = r;
  return 0;
}

DevlinkHealth::Outcome DevlinkHealth::report(const Address& a, int recovery_error,
                                             const DriverRecover& driver) {
  auto [inst, r] = find(a);
  Outcome o{.handle = inst.handle(), .device = inst.rdma_device};
  ++r.error_count;
  const uint8_t prev = r.state;
  r.state = 1;
  notify(inst, r, &o.notifications);
  o.reporter = r;
  // "abort if the previous error wasn't recovered": in error already, or within the grace
  // period of the last recovery, an auto-recovering reporter stays in error (-ECANCELED).
  const bool in_grace =
      r.last_recovery_ms && r.recovery_count &&
      monotonic_ms_() < r.last_recovery_ms + static_cast<int64_t>(r.spec.grace_period_ms);
  if (r.auto_recover && (prev != 0 || in_grace)) {
    o.error = ECANCELED;
    return o;
  }
  if (r.auto_dump && !r.dumped) {
    // devlink_health_do_dump keeps the first dump until it is cleared.
    r.dumped = true;
    // jiffies_to_msecs(jiffies) is 32 bits, and jiffies start 5 minutes before 0
    // (INITIAL_JIFFIES): the kernel's value wraps 5 minutes after boot.
    r.dump_ts_ms = static_cast<uint32_t>(monotonic_ms_() - 300000);
    r.dump_real_ns = static_cast<uint64_t>(real_ns_());
    o.reporter = r;
  }
  if (r.auto_recover) {
    o.error = do_recover(inst, r, recovery_error, driver, &o);
    o.recovered = o.error == 0;
  }
  return o;
}

DevlinkHealth::Outcome DevlinkHealth::recover(const Address& a, int recovery_error,
                                              const DriverRecover& driver) {
  auto [inst, r] = find(a);
  Outcome o{.handle = inst.handle(), .device = inst.rdma_device};
  const bool was_error = r.state != 0;
  o.error = do_recover(inst, r, recovery_error, driver, &o);
  o.recovered = was_error && o.error == 0;
  return o;
}

DevlinkReporter DevlinkHealth::set(const Address& a, std::optional<uint64_t> grace_period_ms,
                                   std::optional<bool> auto_recover,
                                   std::optional<bool> auto_dump) {
  auto [inst, r] = find(a);
  const std::string& name = a.name;
  // devlink_nl_cmd_health_reporter_set_doit: -EOPNOTSUPP for what the operations lack.
  if (!r.spec.recover && (grace_period_ms || auto_recover))
    throw CommandError(inst.handle() + " reporter " + name +
                       " has no recovery: no grace period or auto recover to set");
  if (!r.spec.dump && auto_dump)
    throw CommandError(inst.handle() + " reporter " + name + " has no dump: no auto dump to set");
  if (grace_period_ms) r.spec.grace_period_ms = *grace_period_ms;
  if (auto_recover) r.auto_recover = *auto_recover;
  if (auto_dump) r.auto_dump = *auto_dump;
  return r;
}

void DevlinkHealth::dump_clear(const Address& a) {
  auto [inst, r] = find(a);
  if (!r.spec.dump)
    throw CommandError(inst.handle() + " reporter " + a.name + " has no dump to clear");
  r.dumped = false;
  r.dump_ts_ms = 0;
  r.dump_real_ns = 0;
}

void DevlinkHealth::add_reporter(const std::string& handle, const DevlinkReporterSpec& spec) {
  DevlinkInstance* inst = instance(handle);
  if (inst && !inst->rdma_device.empty() && spec.port_index < 0)
    throw CommandError(handle + " is the devlink instance of " + inst->rdma_device +
                       ": its own reporters are its driver's (a port reporter takes --port)");
  if (!inst) {
    std::string bus, device;
    const size_t slash = handle.find('/');
    bus = handle.substr(0, slash);
    device = handle.substr(slash + 1);
    if (bus == "pci")
      throw CommandError("pci/ handles belong to the simulated devices' PCI functions");
    add_instance(bus, device, {});
    inst = &instances_.back();
  }
  for (const DevlinkReporter& r : inst->reporters)
    if (r.spec.name == spec.name && r.spec.port_index == spec.port_index)
      throw CommandError(
          handle + " already has a reporter " + spec.name +
          (spec.port_index < 0 ? "" : " on port " + std::to_string(spec.port_index)));
  inst->reporters.push_back(created_reporter(spec));
}

void DevlinkHealth::remove_reporter(const Address& a) {
  DevlinkInstance* inst = instance(a.target);
  if (inst && !inst->rdma_device.empty() && !a.port)
    throw CommandError(
        a.target + " is the devlink instance of " + inst->rdma_device +
        ": its own reporters go with the device (unplug); a port reporter takes --port");
  auto [i, r] = find(a);
  const DevlinkReporter* gone = &r;
  std::erase_if(i.reporters, [&](const DevlinkReporter& x) { return &x == gone; });
  // An instance whose driver has no reporter left stays: devlink instances are the bus
  // device's, not the reporters'.
}

std::vector<DevlinkFill> DevlinkHealth::dump() const {
  std::vector<DevlinkFill> out;
  for (const DevlinkInstance& i : instances_)
    for (const DevlinkReporter& r : i.reporters)
      if (r.spec.port_index < 0) out.push_back({i.bus, i.device, r});
  // Then the port reporters, port by port in the order the ports were registered.
  for (const DevlinkInstance& i : instances_) {
    std::vector<int64_t> ports;
    for (const DevlinkReporter& r : i.reporters)
      if (r.spec.port_index >= 0 &&
          std::find(ports.begin(), ports.end(), r.spec.port_index) == ports.end())
        ports.push_back(r.spec.port_index);
    for (int64_t p : ports)
      for (const DevlinkReporter& r : i.reporters)
        if (r.spec.port_index == p) out.push_back({i.bus, i.device, r});
  }
  return out;
}

json DevlinkHealth::show(const std::string& only, std::optional<int64_t> port) const {
  json reporters = json::array();
  for (const DevlinkInstance& i : instances_) {
    if (!only.empty() && only != i.handle() && only != i.rdma_device) continue;
    for (const DevlinkReporter& r : i.reporters)
      if (!port || r.spec.port_index == *port) reporters.push_back(reporter_json(i, r));
  }
  return reporters;
}

}  // namespace rdmasim
