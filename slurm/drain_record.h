// What the follower remembers of its drain across a reboot of the node (docs/scheduler.md,
// "Reasons, and who owns a drain"): the reason it wrote, and every port the drain is for by the
// identity of its adapter (node GUID) and its number, which no renaming of the devices changes,
// those behind the reason's "+N more" included. Kept in state_directory/drain.json. Pure: the
// file's reading and writing are slurm_node.cc's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd_slurm {

// A port a drain of ours is for: the name the reason gives it ("mlx5_0/1") and, when the
// daemon said it, its adapter's node GUID and its number.
struct DrainedPort {
  std::string name;
  std::string node_guid;  // "" when only the name is known (a reason read back without a record)
  uint32_t port = 0;
  friend bool operator==(const DrainedPort&, const DrainedPort&) = default;
};

struct DrainRecord {
  std::string node;    // the Slurm node it was written for
  std::string reason;  // the reason of the drain, exactly as written
  std::vector<DrainedPort> ports;
  friend bool operator==(const DrainRecord&, const DrainRecord&) = default;
};

inline constexpr size_t kMaxDrainedPorts = 1024;

// One line of JSON: {"version":1,"node":...,"reason":...,"ports":[{"name","node_guid","port"}]}.
std::string drain_record_json(const DrainRecord& record);
// The record, or nullopt and *error saying what is wrong (the key, or "not valid JSON").
std::optional<DrainRecord> parse_drain_record(std::string_view text, std::string* error);

}  // namespace rdma_eventd_slurm
