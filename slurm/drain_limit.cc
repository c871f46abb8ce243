#include "drain_limit.h"

#include <algorithm>
#include <limits>
#include <set>

namespace rdma_eventd_slurm {

std::vector<std::string> sinfo_args(std::string_view partitions) {
  std::vector<std::string> args = {"--noheader", "--Node", "--format=%N|%E"};
  if (!partitions.empty()) args.push_back("--partition=" + std::string(partitions));
  return args;
}

std::optional<DrainCount> count_drains(std::string_view output, std::string_view prefix,
                                       std::string_view self, std::string* error) {
  std::set<std::string_view> nodes;
  std::set<std::string_view> ours;
  size_t pos = 0;
  while (pos < output.size()) {
    const size_t end = std::min(output.find('\n', pos), output.size());
    std::string_view line = output.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
      line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t bar = line.find('|');
    if (bar == 0 || bar == std::string_view::npos) {
      if (error)
        *error = "a line that is not NODE|REASON: '" + std::string(line.substr(0, 80)) + "'";
      return std::nullopt;
    }
    const std::string_view node = line.substr(0, bar);
    const std::string_view reason = line.substr(bar + 1);
    nodes.insert(node);
    if (node != self && reason.starts_with(prefix)) ours.insert(node);
  }
  if (nodes.empty()) {
    if (error) *error = "no node listed";
    return std::nullopt;
  }
  return DrainCount{nodes.size(), ours.size()};
}

size_t drains_allowed(const DrainLimit& limit, size_t nodes) {
  switch (limit.kind) {
    case DrainLimit::kOff:
      return std::numeric_limits<size_t>::max();
    case DrainLimit::kNodes:
      return limit.value;
    case DrainLimit::kPercent:
      return std::max<size_t>(1, nodes * limit.value / 100);
  }
  return 0;
}

}  // namespace rdma_eventd_slurm
