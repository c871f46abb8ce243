// The devlink fields of topology files (docs/simulator.md, "devlink health"): a device's
// "devlink_reporters", added to those its driver creates; the top-level "devlink_instances",
// devlink instances with no RDMA device; "devlink_u64_padding"; and "kernel", the release whose
// mlx5 devlink layout the host has.
#pragma once

#include <string>
#include <vector>

#include "json_fields.h"
#include "model.h"
#include "topology.h"

namespace rdmasim {

// A reporter name as the kernel takes one: 1 to 63 printable characters, no '/'.
bool valid_reporter_name(const std::string& name);
// A devlink handle "BUS/DEVICE" split; false when it is not one.
bool split_devlink_handle(const std::string& handle, std::string* bus, std::string* device);

// Reads "devlink_reporters" of a device object.
std::vector<DevlinkReporterSpec> parse_devlink_reporters(JsonFields& device);
// Reads "devlink_instances", "devlink_u64_padding" and "kernel" of the top-level object into `t`.
void parse_devlink_topology(JsonFields& top, Topology* t);

}  // namespace rdmasim
