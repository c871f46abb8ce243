// Lists in the fleet's text outputs (the incidents' evidence, the text table): names joined with
// a separator, and an incident's event counts as a person reads them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace rdma_eventd_fleet {

template <typename Container>
std::string joined(const Container& items, std::string_view separator) {
  std::string text;
  for (const auto& item : items) {
    if (!text.empty()) text += separator;
    text += item;
  }
  return text;
}

// "3 port_err, 1 port_health flapping": each event (or event and verdict) with its count.
inline std::string counts_text(const std::map<std::string, uint64_t>& events) {
  std::string text;
  for (const auto& [name, n] : events)
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  return text;
}

}  // namespace rdma_eventd_fleet
