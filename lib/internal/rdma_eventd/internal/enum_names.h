// Reading a name back as an enum value, from the table of its wire names indexed by value: what
// the record schema, the protocol and the daemon's health states share.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

namespace rdma_eventd::internal {

// The value whose name is `name`, nullopt for none.
template <typename Enum, typename Names>
std::optional<Enum> enum_from_name(const Names& names, std::string_view name) {
  for (size_t i = 0; i < std::size(names); ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace rdma_eventd::internal
