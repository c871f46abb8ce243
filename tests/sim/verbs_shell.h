// Shared parts of verbs_shell (see verbs_shell.cc).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "shell_support.h"

namespace verbs_shell {

// An open context and the last event read from it (for `ack`).
struct Ctx {
  ibv_context* ctx = nullptr;
  ibv_async_event last{};
  bool has_last = false;
};

// The return value, and errno when it reports a failure (ret != 0).
nlohmann::json with_errno(nlohmann::json j, long ret);

// verbs_shell_queries.cc: the query commands; nullopt if w[0] is not one.
std::optional<nlohmann::json> run_query(Ctx& c, const std::vector<std::string>& w);
nlohmann::json port_attr_json(const ibv_port_attr& a);
nlohmann::json gid_entry_json(const ibv_gid_entry& e);
using shell_support::hex;

// verbs_shell_bench.cc: reading many events, and timing.
nlohmann::json cmd_drain(Ctx& c, uint64_t n);
nlohmann::json cmd_consume(Ctx& c, uint64_t n);
nlohmann::json cmd_consume_pipe(uint64_t n);
nlohmann::json cmd_query_cost(Ctx& c, uint8_t port, uint64_t n);

}  // namespace verbs_shell
