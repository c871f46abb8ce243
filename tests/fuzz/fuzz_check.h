// What the fuzz targets use to report a broken invariant: a message, then abort(), which
// libFuzzer treats like any crash (it saves the input and exits non-zero).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace rdma_eventd::fuzz {

[[noreturn]] inline void invariant_failed(const char* file, int line, const char* condition,
                                          std::string_view detail) {
  std::fprintf(stderr, "%s:%d: invariant failed: %s\n  %.*s\n", file, line, condition,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace rdma_eventd::fuzz

// FUZZ_CHECK(condition, detail): detail is a string_view shown when the condition is false.
#define FUZZ_CHECK(condition, detail)                                                  \
  do {                                                                                 \
    if (!(condition)) {                                                                \
      ::rdma_eventd::fuzz::invariant_failed(__FILE__, __LINE__, #condition, (detail)); \
    }                                                                                  \
  } while (0)
