// Shared parts of devx_shell (see devx_shell.cc).
#pragma once

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shell_support.h"

namespace devx_shell {

// A channel and the eventfds of its subscriptions.
struct Channel {
  mlx5dv_devx_event_channel* ch = nullptr;
  std::vector<int> eventfds;
};

// The return value, and errno ("errno_name") when `failed`.
nlohmann::json result(long ret, bool failed);
using shell_support::hex;

// devx_shell_events.cc: reading a channel.
nlohmann::json cmd_get(Channel& c, size_t len);
nlohmann::json cmd_drain(Channel& c, uint64_t n, int timeout_ms);
nlohmann::json cmd_poll(Channel& c, int timeout_ms);
nlohmann::json cmd_read_raw(Channel& c, size_t len);

// devx_shell_caps.cc: QUERY_HCA_CAP through mlx5dv_devx_general_cmd, decoded with DEVX_GET.
nlohmann::json cmd_caps(ibv_context* ctx, uint16_t cap_type, size_t outlen);
nlohmann::json cmd_general(ibv_context* ctx, uint16_t opcode, size_t inlen, size_t outlen);

}  // namespace devx_shell
