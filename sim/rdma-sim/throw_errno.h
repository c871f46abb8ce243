#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace rdmasim {

// A failed system call as an exception: errno's value and text, and what was being done.
[[noreturn]] inline void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace rdmasim
