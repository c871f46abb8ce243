// The RDMA netlink monitor decoder (core/rdma_netlink_decode) on messages laid out as Linux
// builds them (drivers/infiniband/core/nldev.c: nldev_sys_get_doit, rdma_nl_notify_event,
// fill_nldev_handle, fill_mon_netdev_association), and on bytes that are not: bad lengths,
// missing, short or unterminated attributes, unknown ones, other types.
#include "core/rdma_netlink_decode.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "netlink_msg.h"

namespace rdma_eventd::daemon::rdma_netlink {
namespace {

// A NETLINK_RDMA message: the netlink header, then 4-byte aligned attributes (no genetlink
// header).
using simtest::Msg;

// rdma_nl_notify_event for REGISTER, UNREGISTER and RENAME: fill_nldev_handle, then the type.
Msg handle_event(EventType type, uint32_t index, const std::string& name) {
  Msg m(kMonitorType);
  m.u32(kAttrDevIndex, index).str(kAttrDevName, name).u8(kAttrEventType, uint8_t(type));
  return m;
}

std::vector<Message> decoded(const std::vector<uint8_t>& bytes) {
  std::vector<Message> out;
  decode(bytes, out);
  return out;
}

Message one(const std::vector<uint8_t>& bytes) {
  const auto out = decoded(bytes);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Message{} : out[0];
}

TEST(RdmaNetlinkDecode, TheSystemAnswerSaysWhetherTheKernelHasTheMonitor) {
  // 6.12's nldev_sys_get_doit: netns mode, privileged qkey mode, monitor mode, copy on fork.
  Msg with(kSysGetType, 0, 1, 4242);
  with.u8(66, 1).u8(96, 0).u8(kAttrMonitorMode, 1).u8(93, 1);
  const Message m = one(with.done());
  EXPECT_EQ(m.kind, MessageKind::kSystem);
  EXPECT_TRUE(m.monitor_mode);
  EXPECT_EQ(m.seq, 1u);
  EXPECT_EQ(m.pid, 4242u);
  // 6.1's: no monitor mode.
  Msg without(kSysGetType, 0, 1, 4242);
  without.u8(66, 1).u8(93, 1);
  const Message old = one(without.done());
  EXPECT_EQ(old.kind, MessageKind::kSystem);
  EXPECT_FALSE(old.monitor_mode);
  // A monitor mode of 0 is no monitor; one with no byte is malformed.
  Msg off(kSysGetType);
  off.u8(kAttrMonitorMode, 0);
  EXPECT_FALSE(one(off.done()).monitor_mode);
  Msg empty(kSysGetType);
  empty.attr(kAttrMonitorMode, nullptr, 0);
  const Message bad = one(empty.done());
  EXPECT_EQ(bad.kind, MessageKind::kMalformed);
  EXPECT_EQ(bad.problem, "monitor mode has 0 bytes, needs 1");
}

TEST(RdmaNetlinkDecode, RegisterUnregisterAndRenameNameTheDevice) {
  const Message reg = one(handle_event(EventType::kRegister, 3, "mlx5_0").done());
  EXPECT_EQ(reg.kind, MessageKind::kMonitor);
  EXPECT_EQ(reg.notice, (Notice{.event = 0, .device_index = 3, .device = "mlx5_0"}));
  EXPECT_EQ(describe(reg.notice), "register mlx5_0 (index 3)");
  const Message gone = one(handle_event(EventType::kUnregister, 3, "mlx5_0").done());
  EXPECT_EQ(describe(gone.notice), "unregister mlx5_0 (index 3)");
  const Message renamed = one(handle_event(EventType::kRename, 3, "ibp8s0").done());
  EXPECT_EQ(renamed.notice.device, "ibp8s0");
  EXPECT_EQ(describe(renamed.notice), "rename ibp8s0 (index 3)");
}

TEST(RdmaNetlinkDecode, NetdevAttachAndDetachNameThePortAndTheNetdev) {
  // fill_mon_netdev_association: the handle, the port, the netdev while there is one.
  Msg attach(kMonitorType);
  attach.u32(kAttrDevIndex, 1)
      .str(kAttrDevName, "rxe0")
      .u32(kAttrPortIndex, 1)
      .u32(kAttrNdevIndex, 4)
      .str(kAttrNdevName, "eth0")
      .u8(kAttrEventType, uint8_t(EventType::kNetdevAttach));
  const Message a = one(attach.done());
  EXPECT_EQ(a.kind, MessageKind::kMonitor);
  EXPECT_EQ(a.notice, (Notice{.event = 2,
                              .device_index = 1,
                              .device = "rxe0",
                              .port = 1,
                              .netdev_index = 4,
                              .netdev = "eth0"}));
  EXPECT_EQ(describe(a.notice), "netdev_attach rxe0 port 1 eth0 (ifindex 4)");
  Msg detach(kMonitorType);
  detach.u32(kAttrDevIndex, 1).str(kAttrDevName, "rxe0").u32(kAttrPortIndex, 1);
  detach.u8(kAttrEventType, uint8_t(EventType::kNetdevDetach));
  const Message d = one(detach.done());
  EXPECT_EQ(d.notice.netdev_index, -1);
  EXPECT_EQ(describe(d.notice), "netdev_detach rxe0 port 1");
  // A netdev rename names only the netdev (fill_mon_netdev_rename).
  Msg rename(kMonitorType);
  rename.u32(kAttrNdevIndex, 4).str(kAttrNdevName, "roce0");
  rename.u8(kAttrEventType, uint8_t(EventType::kNetdevRename));
  const Message r = one(rename.done());
  EXPECT_EQ(r.kind, MessageKind::kMonitor);
  EXPECT_EQ(describe(r.notice), "netdev_rename roce0 (ifindex 4)");
}

TEST(RdmaNetlinkDecode, SeveralMessagesInOneDatagramAreEachDecoded) {
  std::vector<uint8_t> bytes = handle_event(EventType::kRegister, 7, "rxe1").done();
  Msg attach(kMonitorType);
  attach.u32(kAttrDevIndex, 7).str(kAttrDevName, "rxe1").u32(kAttrPortIndex, 1);
  attach.u8(kAttrEventType, uint8_t(EventType::kNetdevAttach));
  const auto second = attach.done();
  bytes.insert(bytes.end(), second.begin(), second.end());
  const auto out = decoded(bytes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].notice.event, uint8_t(EventType::kRegister));
  EXPECT_EQ(out[1].notice.event, uint8_t(EventType::kNetdevAttach));
  EXPECT_EQ(out[1].notice.port, 1);
}

TEST(RdmaNetlinkDecode, UnknownEventsAttributesAndTypesAreKeptOrSkipped) {
  // An event type a newer kernel adds is a notice with its number.
  Msg future(kMonitorType);
  future.u32(kAttrDevIndex, 2).str(kAttrDevName, "mlx5_1").u32(400, 9).u8(kAttrEventType, 77);
  const Message f = one(future.done());
  EXPECT_EQ(f.kind, MessageKind::kMonitor);
  EXPECT_EQ(describe(f.notice), "event 77 mlx5_1 (index 2)");
  // Another command of the nldev client, another client, a control message.
  EXPECT_EQ(one(Msg((kClientNldev << 10) + 1).u32(kAttrDevIndex, 1).done()).kind,
            MessageKind::kIgnored);
  EXPECT_EQ(one(Msg((2 << 10) + 28).done()).kind, MessageKind::kIgnored);
  EXPECT_EQ(one(Msg(NLMSG_NOOP).done()).kind, MessageKind::kIgnored);
  EXPECT_EQ(one(Msg(NLMSG_DONE).done()).kind, MessageKind::kDone);
  EXPECT_EQ(one(Msg(NLMSG_OVERRUN).done()).kind, MessageKind::kOverrun);
}

TEST(RdmaNetlinkDecode, AnErrorGivesItsErrnoAndABadCodeIsMalformed) {
  const auto error = [](int32_t code) {
    Msg m(NLMSG_ERROR);
    m.attr(0, nullptr, 0);  // room, overwritten below
    std::vector<uint8_t> bytes = m.done();
    bytes.resize(sizeof(nlmsghdr) + sizeof(nlmsgerr), 0);
    const auto len = static_cast<uint32_t>(bytes.size());
    std::memcpy(bytes.data(), &len, 4);
    std::memcpy(bytes.data() + sizeof(nlmsghdr), &code, 4);
    return one(bytes);
  };
  const Message e = error(-EOPNOTSUPP);
  EXPECT_EQ(e.kind, MessageKind::kError);
  EXPECT_EQ(e.error, EOPNOTSUPP);
  EXPECT_EQ(error(0).error, 0);
  EXPECT_EQ(error(INT32_MIN).kind, MessageKind::kMalformed);
  EXPECT_EQ(error(5).problem, "error code 5 is not -errno");
}

TEST(RdmaNetlinkDecode, HostileBytesAreMalformedAndSayWhy) {
  const auto problem = [](const std::vector<uint8_t>& bytes) {
    const auto out = decoded(bytes);
    return out.empty() ? std::string("nothing") : out.back().problem;
  };
  // No event type; no device index.
  EXPECT_EQ(problem(Msg(kMonitorType).u32(kAttrDevIndex, 1).done()), "no event type");
  EXPECT_EQ(problem(Msg(kMonitorType).u8(kAttrEventType, 0).done()), "no device index");
  // Short numbers, unterminated and overlong names.
  EXPECT_EQ(problem(Msg(kMonitorType).attr(kAttrDevIndex, "\1\0", 2).done()),
            "device index has 2 bytes, needs 4");
  EXPECT_EQ(problem(Msg(kMonitorType).attr(kAttrDevName, "mlx5", 4).done()),
            "device name is not NUL-terminated");
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrDevName, std::string(64, 'x')).done()),
            "device name has length 64");
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrNdevName, "").done()), "netdev name has length 0");
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrNdevName, std::string(16, 'e')).done()),
            "netdev name has length 16");
  // Bytes no kernel name has, which would reach the log as they are.
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrDevName, "ml\n_0").done()),
            "device name has a byte a name cannot have");
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrNdevName, "a/b").done()),
            "netdev name has a byte a name cannot have");
  EXPECT_EQ(problem(Msg(kMonitorType).str(kAttrDevName, "mlx 5").done()),
            "device name has a byte a name cannot have");
  // An attribute longer than its message; a message longer than the datagram, which ends it.
  std::vector<uint8_t> long_attr = handle_event(EventType::kRegister, 1, "a").done();
  long_attr[sizeof(nlmsghdr)] = 200;
  EXPECT_EQ(problem(long_attr), "attribute 1 has length 200, 24 bytes left");
  std::vector<uint8_t> cut = handle_event(EventType::kRegister, 1, "mlx5_0").done();
  cut.resize(cut.size() - 4);
  EXPECT_EQ(problem(cut), "message length 44, 40 bytes left");
  // A datagram shorter than a header is nothing.
  EXPECT_TRUE(decoded(std::vector<uint8_t>(15, 0)).empty());
}

TEST(RdmaNetlinkDecode, TheSystemQueryIsARequestOfItsType) {
  const std::vector<uint8_t> q = system_request(9);
  ASSERT_EQ(q.size(), sizeof(nlmsghdr));
  nlmsghdr h{};
  std::memcpy(&h, q.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, sizeof(nlmsghdr));
  EXPECT_EQ(h.nlmsg_type, (5 << 10) + 6);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(h.nlmsg_seq, 9u);
}

}  // namespace
}  // namespace rdma_eventd::daemon::rdma_netlink
