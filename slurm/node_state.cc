#include "node_state.h"

#include <algorithm>

namespace rdma_eventd_slurm {

namespace {

// The value of `key` among the line's space-separated KEY=VALUE fields (values without spaces).
std::optional<std::string_view> field(std::string_view line, std::string_view key) {
  size_t pos = 0;
  while (pos < line.size()) {
    const size_t end = std::min(line.find(' ', pos), line.size());
    const std::string_view token = line.substr(pos, end - pos);
    if (token.size() > key.size() && token.substr(0, key.size()) == key &&
        token[key.size()] == '=') {
      return token.substr(key.size() + 1);
    }
    pos = end + 1;
  }
  return std::nullopt;
}

// Reason= may hold spaces, and Slurm follows it with " [user@time]" and then, when they are
// set, Comment= and Extra= (which may hold spaces too). The reason ends at the first
// " [user@time]" that ends the line or is followed by one of those; without one, at the first
// " Comment=" or " Extra=".
bool ends_reason(std::string_view after) {
  return after.empty() || after.starts_with(" Comment=") || after.starts_with(" Extra=");
}

std::string reason_of(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
    line.remove_suffix(1);
  const size_t at = line.find(" Reason=");
  if (at == std::string_view::npos) return "";
  const std::string_view rest = line.substr(at + 8);
  for (size_t close = rest.find(']'); close != std::string_view::npos;
       close = rest.find(']', close + 1)) {
    if (!ends_reason(rest.substr(close + 1))) continue;
    const size_t open = rest.rfind(" [", close);
    if (open == std::string_view::npos) continue;
    if (rest.substr(open, close - open).find('@') == std::string_view::npos) continue;
    return std::string(rest.substr(0, open));
  }
  size_t end = rest.size();
  for (std::string_view next : {" Comment=", " Extra="})
    end = std::min(end, rest.find(next));
  return std::string(rest.substr(0, end));
}

// The line of `output` whose `key` is `name`, if exactly one has it.
std::optional<std::string_view> line_with(std::string_view output, std::string_view key,
                                          std::string_view name) {
  std::optional<std::string_view> found;
  size_t pos = 0;
  while (pos < output.size()) {
    const size_t end = std::min(output.find('\n', pos), output.size());
    const std::string_view line = output.substr(pos, end - pos);
    pos = end + 1;
    if (field(line, key) != name) continue;
    if (found) return std::nullopt;
    found = line;
  }
  return found;
}

}  // namespace

NodeParse parse_node_state(std::string_view output, std::string_view name, NodeState& out) {
  std::optional<std::string_view> found = line_with(output, "NodeName", name);
  if (!found) found = line_with(output, "NodeHostName", name);
  if (found) {
    const std::string_view line = *found;
    const auto state = field(line, "State");
    const auto node_name = field(line, "NodeName");
    if (!state || state->empty() || !node_name || node_name->empty()) {
      return NodeParse::kUnreadable;
    }
    NodeState s;
    s.name = std::string(*node_name);
    size_t p = 0;
    bool first = true;
    while (p <= state->size()) {
      const size_t plus = std::min(state->find('+', p), state->size());
      std::string part(state->substr(p, plus - p));
      // A state Slurm marks with a trailing * (not responding) in some outputs.
      if (!part.empty() && part.back() == '*') part.pop_back();
      if (first) {
        s.base = part;
      } else if (!part.empty()) {
        s.flags.insert(part);
      }
      first = false;
      p = plus + 1;
    }
    s.reason = reason_of(line);
    s.partitions = std::string(field(line, "Partitions").value_or(""));
    out = std::move(s);
    return NodeParse::kOk;
  }
  const std::string not_found = "Node " + std::string(name) + " not found";
  if (output.find(not_found) != std::string_view::npos) return NodeParse::kNotFound;
  return NodeParse::kUnreadable;
}

}  // namespace rdma_eventd_slurm
