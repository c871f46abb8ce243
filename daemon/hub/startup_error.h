// The subscriber socket's startup errors: what was being done and the system's reason, the one
// line the daemon prints before it exits.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace rdma_eventd::daemon {

[[noreturn]] inline void fail_startup(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

}  // namespace rdma_eventd::daemon
