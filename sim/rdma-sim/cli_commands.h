// The table of rdma-sim commands: name, arguments, options, and what runs them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli.h"

namespace rdmasim::cli {

using Handler = std::function<int(const Global&, const Args&)>;

struct Spec {
  std::string name;
  size_t min_pos;
  size_t max_pos;
  std::vector<std::string> value_options;
  std::vector<std::string> flag_options;
  Handler run;
};

const std::vector<Spec>& specs();

}  // namespace rdmasim::cli
