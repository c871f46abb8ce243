// The drain limit (config.h, DrainLimit) against what Slurm says of the node's partitions: before
// a new drain, one `sinfo --noheader --Node --partition=P --format=%N|%E` lists every node of
// them with its reason, and the drains of ours among them are counted. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config.h"

namespace rdma_eventd_slurm {

struct DrainCount {
  size_t nodes = 0;  // the partitions' nodes, each once
  size_t ours = 0;   // of them, those whose reason starts with our prefix, this node not counted
};

// sinfo's arguments for the partitions (Partitions= of the node: "a,b"); "" asks for every node.
std::vector<std::string> sinfo_args(std::string_view partitions);

// Counts sinfo's lines ("NODE|REASON", a node once per partition it is in). nullopt and *error
// when the output lists no node, or a line that is not NODE|REASON.
std::optional<DrainCount> count_drains(std::string_view output, std::string_view prefix,
                                       std::string_view self, std::string* error);

// How many nodes of `nodes` may be drained by us: kNodes its value, kPercent that share rounded
// down but at least one (a cluster of a few nodes can still drain one), kOff no limit.
size_t drains_allowed(const DrainLimit& limit, size_t nodes);

}  // namespace rdma_eventd_slurm
