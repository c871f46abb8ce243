// A reply's block described once by a table of its fields (wire name and member), which drives
// both writing and reading, so that the two cannot disagree (the status and health replies).
// Private to lib/src.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "json_reader.h"
#include "rdma_eventd/record.h"
#include "schema/json_writer.h"

namespace rdma_eventd {

// A time in microseconds since the epoch, written as RFC 3339.
template <typename Block>
struct TimeMember {
  int64_t Block::*us;
};

template <typename Block>
struct Field {
  std::string_view name;
  std::variant<uint64_t Block::*, uint32_t Block::*, int64_t Block::*, double Block::*,
               bool Block::*, std::string Block::*, TimeMember<Block>>
      member;
};

template <typename Block, size_t N>
using Fields = std::array<Field<Block>, N>;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

template <typename Block, size_t N>
void write_fields(JsonWriter& w, const Block& b, const Fields<Block, N>& fields) {
  for (const auto& f : fields) {
    w.key(f.name);
    std::visit(Overloaded{[&](TimeMember<Block> t) { w.value(format_rfc3339_us(b.*t.us)); },
                          [&](auto member) { w.value(b.*member); }},
               f.member);
  }
}

template <typename Block, size_t N>
bool read_fields(JsonReader& rd, const nlohmann::json& o, Block& b,
                 const Fields<Block, N>& fields) {
  for (const auto& f : fields) {
    const bool ok =
        std::visit(Overloaded{[&](uint64_t Block::*m) { return rd.u64(o, f.name, b.*m); },
                              [&](uint32_t Block::*m) { return rd.u32(o, f.name, b.*m); },
                              [&](int64_t Block::*m) { return rd.i64(o, f.name, b.*m); },
                              [&](double Block::*m) { return rd.real(o, f.name, b.*m); },
                              [&](bool Block::*m) { return rd.boolean(o, f.name, b.*m); },
                              [&](std::string Block::*m) { return rd.str(o, f.name, b.*m); },
                              [&](TimeMember<Block> t) { return rd.time(o, f.name, b.*t.us); }},
                   f.member);
    if (!ok) return false;
  }
  return true;
}

// "key": {fields}
template <typename Block, size_t N>
void write_object(JsonWriter& w, std::string_view key, const Block& b,
                  const Fields<Block, N>& fields) {
  w.key(key);
  w.begin_object();
  write_fields(w, b, fields);
  w.end_object();
}

}  // namespace rdma_eventd
