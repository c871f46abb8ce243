#include "topology_devlink.h"

#include <cstdio>
#include <set>

namespace rdmasim {
namespace {

using nlohmann::json;

DevlinkReporterSpec parse_reporter(JsonFields& o) {
  DevlinkReporterSpec r;
  r.name = o.str("name", "", 63);
  if (!valid_reporter_name(r.name))
    o.fail("name", "\"" + r.name + "\" is not a reporter name (1 to 63 characters, no '/')");
  r.recover = o.flag("recover", true);
  r.dump = o.flag("dump", true);
  r.grace_period_ms = o.num("grace_period_ms", 0, 0, UINT64_MAX / 2);
  // The kernel refuses a grace period for a reporter that cannot recover (WARN_ON, -EINVAL).
  if (r.grace_period_ms && !r.recover)
    o.fail("grace_period_ms", "a reporter without recovery has no grace period");
  if (o.get("port_index"))
    r.port_index = static_cast<int64_t>(o.num("port_index", 0, 0, UINT32_MAX));
  o.check_unknown();
  return r;
}

std::vector<DevlinkReporterSpec> parse_reporters(JsonFields& o, const std::string& key) {
  std::vector<DevlinkReporterSpec> out;
  const json* v = o.get(key);
  if (!v) return out;
  if (!v->is_array() || v->size() > 64)
    o.fail(key, "expected an array of at most 64 reporters, got " + v->dump());
  std::set<std::pair<int64_t, std::string>> seen;
  for (size_t i = 0; i < v->size(); ++i) {
    JsonFields r((*v)[i], o.path(key) + "[" + std::to_string(i) + "]", o.file());
    out.push_back(parse_reporter(r));
    // devlink_health_reporter_create refuses a second reporter of a name (-EEXIST).
    if (!seen.emplace(out.back().port_index, out.back().name).second)
      r.fail("name", "\"" + out.back().name + "\" is already a reporter there");
  }
  return out;
}

// "kernel": "MAJOR.MINOR", from 6.1 (the oldest layout modelled) to 99.99.
KernelVersion parse_kernel(JsonFields& top) {
  KernelVersion k;
  const nlohmann::json* v = top.get("kernel");
  if (!v) return k;
  const std::string text = v->is_string() ? v->get<std::string>() : "";
  int major = 0, minor = 0, used = 0;
  const bool parsed =
      text.size() <= 5 && std::sscanf(text.c_str(), "%2d.%2d%n", &major, &minor, &used) == 2 &&
      used == static_cast<int>(text.size()) && text.find_first_of("+- ") == std::string::npos;
  k.major = major;
  k.minor = minor;
  if (!parsed || !k.at_least(6, 1))
    top.fail("kernel", v->dump() +
                           " is not a kernel release from 6.1 on, as \"MAJOR.MINOR\" (\"6.1\", "
                           "\"6.8\")");
  return k;
}

}  // namespace

bool valid_reporter_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name)
    if (c == '/' || c <= ' ' || c > '~') return false;
  return true;
}

bool split_devlink_handle(const std::string& handle, std::string* bus, std::string* device) {
  const size_t slash = handle.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == handle.size() ||
      handle.find('/', slash + 1) != std::string::npos || handle.size() > 127)
    return false;
  for (char c : handle)
    if (c <= ' ' || c > '~') return false;
  *bus = handle.substr(0, slash);
  *device = handle.substr(slash + 1);
  return true;
}

std::vector<DevlinkReporterSpec> parse_devlink_reporters(JsonFields& device) {
  return parse_reporters(device, "devlink_reporters");
}

void parse_devlink_topology(JsonFields& top, Topology* t) {
  t->devlink_u64_padding = top.flag("devlink_u64_padding", false);
  t->kernel = parse_kernel(top);
  const json* v = top.get("devlink_instances");
  if (!v) return;
  if (!v->is_array() || v->size() > 64)
    top.fail("devlink_instances", "expected an array of at most 64 instances, got " + v->dump());
  for (size_t i = 0; i < v->size(); ++i) {
    JsonFields o((*v)[i], "devlink_instances[" + std::to_string(i) + "]", top.file());
    DevlinkInstanceSpec inst;
    const std::string handle = o.str("handle", "", 127);
    if (!split_devlink_handle(handle, &inst.bus, &inst.device))
      o.fail("handle", "\"" + handle + "\" is not a devlink handle (BUS/DEVICE)");
    if (inst.bus == "pci")
      o.fail("handle", "pci/ handles belong to the simulated devices' PCI functions");
    for (const DevlinkInstanceSpec& other : t->devlink_instances)
      if (other.bus == inst.bus && other.device == inst.device)
        o.fail("handle", "\"" + handle + "\" is already an instance");
    inst.reporters = parse_reporters(o, "reporters");
    o.check_unknown();
    t->devlink_instances.push_back(std::move(inst));
  }
}

}  // namespace rdmasim
