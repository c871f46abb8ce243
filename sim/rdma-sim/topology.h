// Topology files: the JSON description of a simulated fabric (format in docs/simulator.md).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model.h"

namespace rdmasim {

// A malformed topology. what() names the file, the field path (devices[1].ports[0].lid) and the
// offending value.
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Synthetic ifindex for a netdev name the topology did not give one: stable for the fabric's life.
class NetdevTable {
 public:
  uint32_t ifindex(const std::string& name);
  void set(const std::string& name, uint32_t ifindex);
  bool known(const std::string& name) const;
  // The netdev that has this ifindex; nullptr when none has.
  const std::string* name_of(uint32_t ifindex) const;

 private:
  std::vector<std::pair<std::string, uint32_t>> names_;
  uint32_t next_ = 100;
};

// A devlink instance with no RDMA device ("netdevsim/netdevsim9") and its reporters.
struct DevlinkInstanceSpec {
  std::string bus;
  std::string device;
  std::vector<DevlinkReporterSpec> reporters;
};

struct Topology {
  std::vector<DeviceModel> devices;
  std::vector<DevlinkInstanceSpec> devlink_instances;
  // Put DEVLINK_ATTR_PAD before u64 attributes as the kernel does on an architecture without
  // efficient unaligned access (not x86-64 or arm64).
  bool devlink_u64_padding = false;
  KernelVersion kernel;  // "kernel": "6.1" (the default) or later
  NetdevTable netdevs;   // every netdev the file names, with its (given or synthetic) ifindex
};

// A link width ("4x") or speed ("hdr") as ibv_port_attr codes it; nullopt for a name that is
// none. The names, for error messages: "1x, 2x, ...".
std::optional<uint8_t> width_code(const std::string& name);
std::optional<uint32_t> speed_code(const std::string& name);
std::string width_names();
std::string speed_names();

Topology load_topology(const std::string& path);
Topology parse_topology(const std::string& text, const std::string& file_name);

}  // namespace rdmasim
