// Fabric: the port counters of counters/ and hw_counters/. They are sysfs files only (verbs
// report none of them), so a change is written to sysfs and queues no event; `port down` steps
// link_downed (port_commands.cc) before it queues the PORT_ERR.
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
  const bool saturated = r.counter.add(n);
  sysfs_.write_counter(r.device.model, r.port, r.counter);
  return {r.device.model.name + "/" + std::to_string(r.port), r.counter, saturated};
}

Fabric::CounterChange Fabric::counter_set(const std::string& target, const std::string& name,
                                          uint64_t value) {
  CounterRef r = counter_ref(target, name);
  const std::string port = r.device.model.name + "/" + std::to_string(r.port);
  if (value > r.counter.max())
    throw CommandError(port + ": " + r.counter.path() + " is " + std::to_string(r.counter.bits) +
                       " bits wide: " + std::to_string(value) + " is over its maximum " +
                       std::to_string(r.counter.max()));
  r.counter.value = value;
  sysfs_.write_counter(r.device.model, r.port, r.counter);
  return {port, r.counter};
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

void Fabric::count_link_down(DeviceEntry& e, int port) {
  for (Counter& c : e.model.ports[port - 1].counters)
    if (std::strcmp(c.name, "link_downed") == 0) {
      c.add(1);
      sysfs_.write_counter(e.model, port, c);
    }
}

}  // namespace rdmasim
