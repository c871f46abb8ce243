// Helpers of the tests of mlx5's devlink layout and lifecycles (test_devlink_layout.cc,
// test_devlink_mlx5.cc): a simulator on a topology given as text, and the devlink.sock
// notifications as one line each ("NEW pci/0000:00:03.0", "PORT_NEW auxiliary/mlx5_core.eth.1/
// 131071 eth eth2", "RECOVER pci/0000:00:03.0 fw_fatal error").
#pragma once

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "netlink_client.h"
#include "sim_test.h"

namespace simtest {

using Bytes = std::vector<uint8_t>;

constexpr uint16_t kDevlinkFamily = 0x14;  // the stand-in's devlink family id

// One device of each kind: mlx5_0 in InfiniBand mode, mlx5_1 a one-port Ethernet function
// whose netdev is eth2 (ifindex 42).
inline std::string two_functions(const std::string& kernel) {
  return R"({"kernel": ")" + kernel + R"(",
    "devices": [
      {"name": "mlx5_0", "link_layer": "infiniband", "ports": [{"state": "active", "lid": 3}]},
      {"name": "mlx5_1", "link_layer": "ethernet",
       "ports": [{"netdev": "eth2", "netdev_ifindex": 42, "mac": "0c:42:a1:00:00:02"}]}]})";
}

// A simulator on a topology given as text.
class LayoutSim {
 public:
  explicit LayoutSim(const std::string& text) {
    std::ofstream(tmp_.file("t.json")) << text;
    sim_ = std::make_unique<Sim>(tmp_.file("t.json"));
  }
  Sim& operator*() { return *sim_; }
  Sim* operator->() { return sim_.get(); }

 private:
  rdmatest::TempDir tmp_{"rdma-layout"};
  std::unique_ptr<Sim> sim_;
};

inline std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : "(unresolved " + path + ")";
}

inline uint8_t command_of(const Bytes& m) {
  return m.size() > NLMSG_HDRLEN ? m[NLMSG_HDRLEN] : 0;
}

// The first-level attributes of a generic-netlink message: type (flags masked) and payload.
inline std::vector<std::pair<uint16_t, Bytes>> attrs_of(const Bytes& m,
                                                        size_t at = NLMSG_HDRLEN + GENL_HDRLEN) {
  std::vector<std::pair<uint16_t, Bytes>> out;
  while (at + 4 <= m.size()) {
    uint16_t len, type;
    std::memcpy(&len, &m[at], 2);
    std::memcpy(&type, &m[at + 2], 2);
    if (len < 4 || at + len > m.size()) break;
    out.emplace_back(type & NLA_TYPE_MASK, Bytes(m.begin() + at + 4, m.begin() + at + len));
    at += (len + 3u) & ~3u;
  }
  return out;
}

inline std::string string_in(const std::vector<std::pair<uint16_t, Bytes>>& attrs, uint16_t type) {
  for (const auto& [t, p] : attrs)
    if (t == type)
      return std::string(reinterpret_cast<const char*>(p.data()),
                         strnlen(reinterpret_cast<const char*>(p.data()), p.size()));
  return "";
}

// A u8, u16, u32 or u64 attribute's value; UINT64_MAX when absent.
inline uint64_t number_in(const std::vector<std::pair<uint16_t, Bytes>>& attrs, uint16_t type) {
  for (const auto& [t, p] : attrs)
    if (t == type && (p.size() == 1 || p.size() == 2 || p.size() == 4 || p.size() == 8)) {
      uint64_t v = 0;
      std::memcpy(&v, p.data(), p.size());
      return v;
    }
  return UINT64_MAX;
}

// A notification as a line: "NEW pci/0000:00:02.0", "PORT_NEW auxiliary/mlx5_core.eth.1/131071
// eth eth2", "PORT_DEL ... notset", "RECOVER pci/0000:00:03.0 fw_fatal error".
inline std::string describe(const Bytes& m) {
  const uint8_t cmd = command_of(m);
  const auto attrs = attrs_of(m);
  std::string what = cmd == DEVLINK_CMD_NEW                       ? "NEW"
                     : cmd == DEVLINK_CMD_DEL                     ? "DEL"
                     : cmd == DEVLINK_CMD_PORT_NEW                ? "PORT_NEW"
                     : cmd == DEVLINK_CMD_PORT_DEL                ? "PORT_DEL"
                     : cmd == DEVLINK_CMD_HEALTH_REPORTER_RECOVER ? "RECOVER"
                                                                  : "cmd " + std::to_string(cmd);
  what +=
      " " + string_in(attrs, DEVLINK_ATTR_BUS_NAME) + "/" + string_in(attrs, DEVLINK_ATTR_DEV_NAME);
  if (cmd == DEVLINK_CMD_PORT_NEW || cmd == DEVLINK_CMD_PORT_DEL) {
    what += "/" + std::to_string(number_in(attrs, DEVLINK_ATTR_PORT_INDEX));
    const uint64_t type = number_in(attrs, DEVLINK_ATTR_PORT_TYPE);
    what += type == DEVLINK_PORT_TYPE_ETH ? " eth" : type == 0 ? " notset" : " ?";
    const std::string netdev = string_in(attrs, DEVLINK_ATTR_PORT_NETDEV_NAME);
    if (!netdev.empty()) what += " " + netdev;
  }
  if (cmd == DEVLINK_CMD_HEALTH_REPORTER_RECOVER)
    for (const auto& [t, nested] : attrs)
      if (t == DEVLINK_ATTR_HEALTH_REPORTER) {
        const auto r = attrs_of(nested, 0);
        what += " " + string_in(r, DEVLINK_ATTR_HEALTH_REPORTER_NAME) +
                (number_in(r, DEVLINK_ATTR_HEALTH_REPORTER_STATE) == 0 ? " healthy" : " error");
      }
  return what;
}

// Every notification that arrives until none comes for 200 ms.
inline std::vector<std::string> drain(NetlinkClient& c) {
  std::vector<std::string> out;
  while (auto d = c.receive(200)) {
    out.push_back(describe(*d));
  }
  return out;
}

inline std::string socket_of(Sim& sim) {
  return sim.dir() + "/devlink.sock";
}

inline void connected(Sim& sim, NetlinkClient&) {
  sim.wait_stats([](const json& s) { return s["devlink"]["connections_open"] == 1; });
}

}  // namespace simtest
