// The table of rdma-sim commands: name, arguments, options, and what runs them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
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
// cli_devx.cc: the DEVX commands, appended to the others.
std::vector<Spec> with_devx_specs(std::vector<Spec> specs);
// cli_counters.cc: the counter commands, appended likewise.
std::vector<Spec> with_counter_specs(std::vector<Spec> specs);
// cli_devlink.cc: the devlink commands, appended likewise.
std::vector<Spec> with_devlink_specs(std::vector<Spec> specs);

// Helpers of the command table.
// A number in decimal, or hex with 0x, up to max; UsageError otherwise.
uint64_t number(const std::string& text, const std::string& what, uint64_t max);
std::optional<std::string> option(const Args& a, const std::string& name);
std::vector<std::string> split(const std::string& text, char sep);
// A storm request: {"cmd": CMD, "count": --count, WHERE: --WHERE split at commas unless "all",
// "types": --types split at commas, each through `type`}. `command` names it in the usage error.
nlohmann::json storm_request(const Args& a, const std::string& command, const std::string& cmd,
                             const std::string& where,
                             const std::function<nlohmann::json(const std::string&)>& type);
// Sends a request and prints the reply: the message (or `human`), or the JSON with --json.
int send(const Global& g, nlohmann::json req,
         const std::function<void(const nlohmann::json&)>& human = nullptr);

}  // namespace rdmasim::cli
