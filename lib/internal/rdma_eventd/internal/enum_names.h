// Names of enum values in a table indexed by value, both ways: what the record schema, the
// protocol, the daemon, the client library, rdma-eventctl and rdma-sim share.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <ranges>
#include <string_view>

namespace rdma_eventd::internal {

// The entry of `table` at `value` (an enum or an index), `fallback` for a value past its end: a
// name, or whatever else the table maps each value to.
template <typename Table, typename Index>
constexpr std::ranges::range_value_t<Table> enum_name(const Table& table, Index value,
                                                      std::ranges::range_value_t<Table> fallback) {
  const auto i = static_cast<size_t>(value);
  return i < std::size(table) ? table[i] : fallback;
}

// The value whose name is `name`, nullopt for none.
template <typename Enum, typename Names>
std::optional<Enum> enum_from_name(const Names& names, std::string_view name) {
  for (size_t i = 0; i < std::size(names); ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace rdma_eventd::internal
