// What the test programs driven line by line (verbs_shell, devx_shell) share: hex dumps and errno
// names in their JSON answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace shell_support {

inline std::string hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const uint8_t*>(p)[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

// "EINVAL" for EINVAL; "" for 0.
inline std::string errno_name(int err) {
  const char* name = err ? strerrorname_np(err) : nullptr;
  return name ? name : "";
}

}  // namespace shell_support
