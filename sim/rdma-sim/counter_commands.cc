// Fabric: the port counters of counters/ and hw_counters/. They are sysfs files only (verbs
// report none of them), so a change is written to sysfs and queues no event; `port down` steps
// link_downed (port_commands.cc) before it queues the PORT_ERR. And a RoCE port's ethtool PHY
// counters, which live in the model only: the generic netlink stand-in reads them when asked.
#include <cstring>

#include "fabric.h"

namespace rdmasim {

Fabric::CounterRef Fabric::counter_ref(const std::string& target, const std::string& name) {
  auto [e, p] = port(target);
  std::string error;
  Counter* c = find_counter(e->model.ports[p - 1].counters, name,
                            e->model.name + "/" + std::to_string(p), &error);
  if (!c) throw CommandError(error);
  return {*e, p, *c};
}

Fabric::CounterChange Fabric::counter_add(const std::string& target, const std::string& name,
                                          uint64_t n) {
  CounterRef r = counter_ref(target, name);
  const bool over = r.counter.add(n);
  sysfs_.write_counter(r.device.model, r.port, r.counter);
  return {r.device.model.name + "/" + std::to_string(r.port), r.counter, over && !r.counter.wraps,
          over && r.counter.wraps};
}

Fabric::CounterChange Fabric::counter_set(const std::string& target, const std::string& name,
                                          uint64_t value) {
  CounterRef r = counter_ref(target, name);
  const std::string port = r.device.model.name + "/" + std::to_string(r.port);
  const bool over = value > r.counter.max();
  if (over && !r.counter.wraps)
    throw CommandError(port + ": " + r.counter.path() + " is " + std::to_string(r.counter.bits) +
                       " bits wide: " + std::to_string(value) + " is over its maximum " +
                       std::to_string(r.counter.max()));
  r.counter.value = value & r.counter.max();
  sysfs_.write_counter(r.device.model, r.port, r.counter);
  return {port, r.counter, false, over};
}

Fabric::CounterChange Fabric::counter_fail(const std::string& target, const std::string& name,
                                           CounterFault fault) {
  CounterRef r = counter_ref(target, name);
  r.counter.fault = fault;
  sysfs_.write_counter(r.device.model, r.port, r.counter);
  return {r.device.model.name + "/" + std::to_string(r.port), r.counter};
}

size_t Fabric::counter_reset(const std::string& target) {
  auto [e, p] = port(target);
  size_t reset = 0;
  for (const Counter& c : e->model.ports[p - 1].counters)
    reset += c.group == CounterGroup::kPma;
  if (reset == 0)
    throw CommandError(e->model.name + "/" + std::to_string(p) + " has no counters/ group");
  for (Counter& c : e->model.ports[p - 1].counters)
    if (c.group == CounterGroup::kPma) {
      c.value = 0;
      sysfs_.write_counter(e->model, p, c);
    }
  return reset;
}

uint64_t& Fabric::phy_counter_ref(const std::string& target, const std::string& name,
                                  PhyCounterChange* change) {
  auto [e, p] = port(target);
  Port& port = e->model.ports[p - 1];
  change->port = e->model.name + "/" + std::to_string(p);
  change->name = name;
  change->fec = port.phy.fec;
  if (!port.is_ethernet())
    throw CommandError(change->port + " is an InfiniBand port: it has no netdev, so no " + name +
                       " (ethtool counters are for RoCE ports)");
  if (!port.phy.supported())
    throw CommandError(change->port + "'s netdev reports no PHY statistics (fec unsupported)");
  uint64_t* c = find_ethtool_counter(port.phy, name);
  if (!c)
    throw CommandError(change->port + " has no counter \"" + name + "\" (" + kEthtoolCounterNames +
                       ")");
  return *c;
}

Fabric::PhyCounterChange Fabric::phy_counter_add(const std::string& target, const std::string& name,
                                                 uint64_t n) {
  PhyCounterChange change;
  uint64_t& c = phy_counter_ref(target, name, &change);
  // Saturating as the sysfs counters do: a 64-bit counter never gets there in a test's life.
  change.saturated = n > UINT64_MAX - c;
  c = change.saturated ? UINT64_MAX : c + n;
  change.value = c;
  return change;
}

Fabric::PhyCounterChange Fabric::phy_counter_set(const std::string& target, const std::string& name,
                                                 uint64_t value) {
  PhyCounterChange change;
  uint64_t& c = phy_counter_ref(target, name, &change);
  c = value;
  change.value = c;
  return change;
}

void Fabric::count_link_down(DeviceEntry& e, int port) {
  for (Counter& c : e.model.ports[port - 1].counters)
    if (std::strcmp(c.name, "link_downed") == 0) {
      c.add(1);
      sysfs_.write_counter(e.model, port, c);
    }
}

}  // namespace rdmasim
