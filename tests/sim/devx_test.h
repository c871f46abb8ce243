// Shared helpers of the DEVX tests: devx_shell (a program linked against the system libmlx5 and
// libibverbs) under a fabric, and the EQE layouts the tests expect, written from the kernel's
// include/linux/mlx5/device.h independently of the simulator's encoder.
#pragma once

#include <string>

#include "sim_test.h"

namespace simtest {

inline std::string devx_variants() {
  return rdmatest::topology("devx-variants");
}

// devx_shell under a fabric (it lists the devices first).
class DevxShell : public JsonShell {
 public:
  explicit DevxShell(const SimFabric& sim) : JsonShell(sim, DEVX_SHELL) { (*this)("list"); }

  // A context of the device ("devx": mlx5dv_open_device with MLX5DV_CONTEXT_FLAGS_DEVX).
  std::string open(const std::string& device, const std::string& mode = "devx") {
    const json c = (*this)("open " + device + " " + mode);
    if (c["null"]) throw rdmatest::HarnessError("open " + device + " failed: " + c.dump());
    return c["ctx"];
  }
  // A channel of the context, subscribed to `events` (comma-separated) with `cookie`.
  std::string channel(const std::string& ctx, const std::string& events, uint64_t cookie,
                      bool omit = false) {
    const json h = (*this)("channel " + ctx + (omit ? " omit" : ""));
    if (h["null"]) throw rdmatest::HarnessError("channel on " + ctx + " failed: " + h.dump());
    const std::string ch = h["ch"];
    const json s = (*this)("subscribe " + ch + " " + std::to_string(cookie) + " " + events);
    if (s["ret"] != 0) throw rdmatest::HarnessError("subscribe failed: " + s.dump());
    return ch;
  }
};

// The channel has nothing to read: made non-blocking, a read fails with EAGAIN.
inline void expect_nothing_to_read(DevxShell& sh, const std::string& ch) {
  sh("nonblock " + ch + " 1");
  EXPECT_EQ(sh("get " + ch + " 72")["errno_name"], "EAGAIN") << ch;
}

// The 64-byte EQE in hex: type at byte 1, subtype at byte 3, `data` (hex) from byte 32.
inline std::string eqe_hex(uint8_t type, uint8_t subtype, const std::string& data) {
  char head[9];
  std::snprintf(head, sizeof head, "00%02x00%02x", type, subtype);
  std::string eqe = head + std::string(56, '0') + data;
  return eqe + std::string(128 - eqe.size(), '0');
}

// `rdma-sim ARGS` refused: exit 1 and this message on stderr, stdout empty.
inline void expect_refused(const SimFabric& sim, const std::vector<std::string>& args,
                           const std::string& message) {
  const rdmatest::CommandResult r = sim.ctl(args);
  EXPECT_EQ(r.exit_code(), 1) << r.err;
  EXPECT_EQ(r.err, "rdma-sim: " + message + "\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace simtest
