// Whether two short texts are equal, inlined where the event path compares a record's names
// with the ones it had (a device's name, its node GUID, the stream and the host): each
// compare is a few loads, where std::string's == calls memcmp, and that call costs more than
// the compare of a 6- to 32-byte text.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace rdma_eventd::internal {

[[gnu::always_inline]] inline bool same_text(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  const auto load8 = [](const char* s) {
    uint64_t v;
    std::memcpy(&v, s, sizeof v);
    return v;
  };
  const auto load4 = [](const char* s) {
    uint32_t v;
    std::memcpy(&v, s, sizeof v);
    return v;
  };
  // 8 bytes at a time, the last 8 overlapping the ones before.
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load8(p + i) != load8(q + i)) return false;
    return load8(p + n - 8) == load8(q + n - 8);
  }
  if (n >= 4) return load4(p) == load4(q) && load4(p + n - 4) == load4(q + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

}  // namespace rdma_eventd::internal
