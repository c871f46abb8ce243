// What the test programs driven line by line (verbs_shell, devx_shell) share: their main loop,
// hex dumps and errno names in their JSON answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

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

// The shells' main loop: one command line in, one JSON line out (`run(words)`, an exception
// becoming {"error": what}), until the end of input or a command that throws `Exit`.
template <typename Exit, typename Run>
void serve_lines(Run run) {
  std::ios::sync_with_stdio(false);
  for (std::string line; std::getline(std::cin, line);) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;)
      words.push_back(w);
    if (words.empty()) continue;
    decltype(run(words)) answer;
    try {
      answer = run(words);
    } catch (const Exit&) {
      break;
    } catch (const std::exception& e) {
      answer = {{"error", e.what()}};
    }
    std::cout << answer.dump() << std::endl;
  }
}

}  // namespace shell_support
