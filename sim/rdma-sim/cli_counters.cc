// The counter commands: counter add, set, fail and reset on a port's counters/ and hw_counters/.
// The simulator checks the names, widths and modes; the command line checks the numbers.
#include "cli_commands.h"
#include "counters.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

// {"cmd": "counter", "action": ACTION, "port": DEV/PORT, "name": NAME, "value": N}.
Handler value_command(const std::string& action) {
  return [action](const Global& g, const Args& a) {
    return send(g, {{"cmd", "counter"},
                    {"action", action},
                    {"port", a.positional[0]},
                    {"name", a.positional[1]},
                    {"value", number(a.positional[2], "value", UINT64_MAX)}});
  };
}

}  // namespace

std::vector<Spec> with_counter_specs(std::vector<Spec> specs) {
  const std::vector<Spec> counter_specs = {
      {"counter add", 3, 3, {}, {}, value_command("add")},
      {"counter set", 3, 3, {}, {}, value_command("set")},
      {"counter fail",
       3,
       3,
       {},
       {},
       [](const Global& g, const Args& a) {
         CounterFault fault;
         if (!parse_fault(a.positional[2], &fault))
           throw UsageError("mode \"" + a.positional[2] + "\" is not one of: " + kFaultNames);
         return send(g, {{"cmd", "counter"},
                         {"action", "fail"},
                         {"port", a.positional[0]},
                         {"name", a.positional[1]},
                         {"mode", a.positional[2]}});
       }},
      {"counter reset",
       1,
       1,
       {},
       {},
       [](const Global& g, const Args& a) {
         return send(g, {{"cmd", "counter"}, {"action", "reset"}, {"port", a.positional[0]}});
       }},
  };
  specs.insert(specs.end(), counter_specs.begin(), counter_specs.end());
  return specs;
}

}  // namespace rdmasim::cli
