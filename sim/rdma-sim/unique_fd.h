// One owner per file descriptor: the project's UniqueFd (lib/internal), named in the
// simulator's namespace.
#pragma once

#include "rdma_eventd/internal/unique_fd.h"

namespace rdmasim {

using rdma_eventd::internal::UniqueFd;

}  // namespace rdmasim
