// The RDMA netlink decoder (core/rdma_netlink_decode) on the real kernel's datagrams
// (tests/unit/data/rdma_netlink/: Debian's Linux 6.12.117 and 6.1 in the kernel tests' guests,
// Soft-RoCE over a veth pair, captured by netlink-capture --rdma): every file decodes to exactly
// the messages written here, whole.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/rdma_netlink_decode.h"

namespace rdma_eventd::daemon::rdma_netlink {
namespace {

std::vector<uint8_t> captured(const std::string& name) {
  std::ifstream in(
      std::string(RDMA_EVENTD_SOURCE_DIR) + "/tests/unit/data/rdma_netlink/" + name + ".bin",
      std::ios::binary);
  EXPECT_TRUE(in) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A message's every field, for one comparison that shows all of them.
std::string whole(const Message& m) {
  const Notice& n = m.notice;
  return "kind " + std::to_string(static_cast<int>(m.kind)) + " type " + std::to_string(m.type) +
         " flags " + std::to_string(m.flags) + " seq " + std::to_string(m.seq) + " pid " +
         std::to_string(m.pid) + " monitor_mode " + std::to_string(m.monitor_mode) + " error " +
         std::to_string(m.error) + " problem '" + m.problem + "' notice {" +
         std::to_string(n.event) + " " + std::to_string(n.device_index) + " '" + n.device + "' " +
         std::to_string(n.port) + " " + std::to_string(n.netdev_index) + " '" + n.netdev + "'}";
}

std::vector<std::string> decoded(const std::string& name) {
  std::vector<Message> out;
  decode(captured(name), out);
  std::vector<std::string> wholes;
  for (const Message& m : out)
    wholes.push_back(whole(m));
  return wholes;
}

Message monitor(Notice n) {
  Message m;
  m.kind = MessageKind::kMonitor;
  m.type = kMonitorType;
  m.notice = std::move(n);
  return m;
}

// The answers to the system query (netlink-capture's seq 2, from its socket's port id): 6.12's
// has the monitor mode (netns mode 1, privileged qkey 0, monitor mode 1, copy on fork 1); 6.1's
// (6.1.0-56-amd64) has the others and not it.
TEST(RdmaNetlinkCapture, TheSystemAnswersOf612And61) {
  Message with;
  with.kind = MessageKind::kSystem;
  with.type = kSysGetType;
  with.seq = 2;
  with.pid = 177;
  with.monitor_mode = true;
  EXPECT_EQ(decoded("sys_answer_6_12"), std::vector<std::string>{whole(with)});
  Message without;
  without.kind = MessageKind::kSystem;
  without.type = kSysGetType;
  without.seq = 2;
  without.pid = 1320;
  EXPECT_EQ(decoded("sys_answer_6_1"), std::vector<std::string>{whole(without)});
}

// rdma link add rxe0 type rxe netdev veth0 on 6.12: REGISTER, then NETDEV_ATTACH, each a datagram
// of its own, from the kernel (seq 0, port id 0). The first device has index 0.
TEST(RdmaNetlinkCapture, RegisterThenNetdevAttachOf612) {
  const Message reg = monitor({.event = 0, .device_index = 0, .device = "rxe0"});
  EXPECT_EQ(decoded("register_6_12"), std::vector<std::string>{whole(reg)});
  const Message attach = monitor({.event = 2,
                                  .device_index = 0,
                                  .device = "rxe0",
                                  .port = 1,
                                  .netdev_index = 3,
                                  .netdev = "veth0"});
  EXPECT_EQ(decoded("netdev_attach_6_12"), std::vector<std::string>{whole(attach)});
  EXPECT_EQ(describe(attach.notice), "netdev_attach rxe0 port 1 veth0 (ifindex 3)");
}

// rdma link delete rxe7 (rxe0 renamed, which 6.12 does not announce): UNREGISTER under the new
// name, and no NETDEV_DETACH.
TEST(RdmaNetlinkCapture, UnregisterOf612) {
  const Message gone = monitor({.event = 1, .device_index = 0, .device = "rxe7"});
  EXPECT_EQ(decoded("unregister_6_12"), std::vector<std::string>{whole(gone)});
  EXPECT_EQ(describe(gone.notice), "unregister rxe7 (index 0)");
}

}  // namespace
}  // namespace rdma_eventd::daemon::rdma_netlink
