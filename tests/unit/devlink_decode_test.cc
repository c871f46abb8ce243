// The devlink generic-netlink decoder (core/devlink_decode) on messages laid out as Linux 6.1
// builds them (genetlink.c ctrl_fill_info; devlink.c devlink_nl_health_reporter_fill), and on
// bytes that are not: bad lengths, missing attributes, unknown ones, another family's messages.
#include "core/devlink_decode.h"

#include <gtest/gtest.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "captured_hex.h"

namespace rdma_eventd::daemon::devlink {
namespace {

constexpr uint16_t kFamilyId = 27;

// Builds netlink messages as the kernel does: 4-byte aligned attributes, u64 values padded to
// 8-byte alignment with DEVLINK_ATTR_PAD (nla_put_u64_64bit).
class Msg {
 public:
  Msg(uint16_t type, uint8_t command, uint16_t flags = 0, uint32_t seq = 0) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    append(&h, sizeof h);
    const uint8_t genl[4] = {command, 1, 0, 0};
    append(genl, 4);
  }
  Msg& str(uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  Msg& u8(uint16_t type, uint8_t v) { return attr(type, &v, 1); }
  Msg& u16(uint16_t type, uint16_t v) { return attr(type, &v, 2); }
  Msg& u32(uint16_t type, uint32_t v) { return attr(type, &v, 4); }
  Msg& u64(uint16_t type, uint64_t v) {
    if ((bytes_.size() + 4) % 8 != 0) attr(DEVLINK_ATTR_PAD, nullptr, 0);
    return attr(type, &v, 8);
  }
  Msg& begin(uint16_t type) {
    nests_.push_back(bytes_.size());
    return attr(type | NLA_F_NESTED, nullptr, 0);
  }
  Msg& end() {
    const size_t at = nests_.back();
    nests_.pop_back();
    const auto len = static_cast<uint16_t>(bytes_.size() - at);
    std::memcpy(bytes_.data() + at, &len, 2);
    return *this;
  }
  std::vector<uint8_t> done() const {
    std::vector<uint8_t> out = bytes_;
    const auto len = static_cast<uint32_t>(out.size());
    std::memcpy(out.data(), &len, 4);
    return out;
  }

 private:
  Msg& attr(uint16_t type, const void* data, size_t size) {
    const auto len = static_cast<uint16_t>(4 + size);
    append(&len, 2);
    append(&type, 2);
    if (size) append(data, size);
    bytes_.resize((bytes_.size() + 3) & ~size_t{3}, 0);
    return *this;
  }
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<uint8_t> bytes_;
  std::vector<size_t> nests_;
};

Msg reporter_msg(uint8_t command, const std::string& name, uint8_t state, uint64_t errors,
                 uint64_t recoveries, int64_t port = -1, uint16_t flags = 0, uint32_t seq = 0) {
  Msg m(kFamilyId, command, flags, seq);
  m.str(DEVLINK_ATTR_BUS_NAME, "pci").str(DEVLINK_ATTR_DEV_NAME, "0000:08:00.0");
  if (port >= 0) m.u32(DEVLINK_ATTR_PORT_INDEX, static_cast<uint32_t>(port));
  m.begin(DEVLINK_ATTR_HEALTH_REPORTER)
      .str(DEVLINK_ATTR_HEALTH_REPORTER_NAME, name)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_STATE, state)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, errors)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, recoveries)
      .u64(DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, 1200000)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, 1)
      .u8(DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, 1)
      .end();
  return m;
}

std::vector<Message> decoded(const std::vector<uint8_t>& bytes, uint16_t family = kFamilyId) {
  std::vector<Message> out;
  decode(bytes, family, out);
  return out;
}

// A family's one multicast group, nested as the controller's answer has it.
void add_mcast_group(Msg& m, uint32_t id, const std::string& name) {
  m.begin(CTRL_ATTR_MCAST_GROUPS)
      .begin(1)
      .u32(CTRL_ATTR_MCAST_GRP_ID, id)
      .str(CTRL_ATTR_MCAST_GRP_NAME, name)
      .end()
      .end();
}

// The kind of the first message `bytes` decode to.
MessageKind first_kind(const std::vector<uint8_t>& bytes, uint16_t family = kFamilyId) {
  return decoded(bytes, family)[0].kind;
}

// A well-formed message (fw on port 1 recovered) for the tests that break it.
std::vector<uint8_t> fw_recovery() {
  return reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, "fw", 1, 1, 0).done();
}

// `message` with the length in its header (nlmsg_len) made `len`.
std::vector<uint8_t> with_length(std::vector<uint8_t> message, uint32_t len) {
  std::memcpy(message.data(), &len, 4);
  return message;
}

std::vector<uint8_t> concat(std::vector<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(DevlinkDecode, TheControllersAnswerGivesTheFamilyAndItsConfigGroup) {
  Msg m(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  m.str(CTRL_ATTR_FAMILY_NAME, "devlink").u16(CTRL_ATTR_FAMILY_ID, kFamilyId);
  m.u32(CTRL_ATTR_VERSION, 1).u32(CTRL_ATTR_HDRSIZE, 0).u32(CTRL_ATTR_MAXATTR, 180);
  add_mcast_group(m, 9, "config");
  const auto out = decoded(m.done(), 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MessageKind::kFamily);
  EXPECT_EQ(out[0].family.id, kFamilyId);
  EXPECT_EQ(out[0].family.config_group, 9u);
}

TEST(DevlinkDecode, AFamilyWithoutTheConfigGroupHasNone) {
  Msg m(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  m.u16(CTRL_ATTR_FAMILY_ID, kFamilyId).str(CTRL_ATTR_FAMILY_NAME, "devlink");
  add_mcast_group(m, 4, "other");
  const auto out = decoded(m.done(), 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MessageKind::kFamily);
  EXPECT_EQ(out[0].family.config_group, 0u);
  // Another family's answer is not devlink's.
  Msg other(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY);
  other.u16(CTRL_ATTR_FAMILY_ID, 30).str(CTRL_ATTR_FAMILY_NAME, "nl80211");
  EXPECT_EQ(first_kind(other.done(), 0), MessageKind::kMalformed);
}

TEST(DevlinkDecode, ANotificationGivesTheWholeReporter) {
  const auto out =
      decoded(reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, "fw_fatal", 1, 3, 2).done());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].kind, MessageKind::kReporter) << out[0].problem;
  const Reporter want{"pci", "0000:08:00.0", -1, "fw_fatal", 1, 3, 2, 1200000, true};
  EXPECT_EQ(out[0].reporter, want);
  EXPECT_EQ(out[0].reporter.handle(), "pci/0000:08:00.0");
  EXPECT_EQ(out[0].pid, 0u);
}

TEST(DevlinkDecode, ADumpIsItsReportersThenDone) {
  nlmsghdr done{};
  done.nlmsg_len = NLMSG_LENGTH(sizeof(int));
  done.nlmsg_type = NLMSG_DONE;
  done.nlmsg_flags = NLM_F_MULTI;
  done.nlmsg_seq = 7;
  std::vector<uint8_t> tail(done.nlmsg_len, 0);
  std::memcpy(tail.data(), &done, sizeof done);
  const auto out = decoded(concat(
      {reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_GET, "fw", 0, 0, 0, -1, NLM_F_MULTI, 7).done(),
       reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_GET, "tx", 1, 5, 4, 3, NLM_F_MULTI, 7).done(),
       tail}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].reporter.name, "fw");
  EXPECT_EQ(out[0].seq, 7u);
  EXPECT_EQ(out[1].reporter.name, "tx");
  EXPECT_EQ(out[1].reporter.port_index, 3);
  EXPECT_EQ(out[1].reporter.error_count, 5u);
  EXPECT_EQ(out[2].kind, MessageKind::kDone);
}

TEST(DevlinkDecode, AnErrorMessageGivesItsErrno) {
  nlmsghdr h{};
  h.nlmsg_len = NLMSG_LENGTH(sizeof(nlmsgerr));
  h.nlmsg_type = NLMSG_ERROR;
  std::vector<uint8_t> bytes(h.nlmsg_len, 0);
  std::memcpy(bytes.data(), &h, sizeof h);
  const int32_t enoent = -ENOENT;
  std::memcpy(bytes.data() + sizeof h, &enoent, 4);
  const auto out = decoded(bytes, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MessageKind::kError);
  EXPECT_EQ(out[0].error, ENOENT);
}

// An NLMSG_ERROR whose code is not 0 or -errno did not come from the kernel. INT32_MIN is
// the value the fuzzer found: negating it as an int is undefined.
TEST(DevlinkDecode, AnErrorCodeThatIsNotMinusErrnoIsMalformed) {
  const auto with_code = [](int32_t code) {
    nlmsghdr h{};
    h.nlmsg_len = NLMSG_LENGTH(sizeof(nlmsgerr));
    h.nlmsg_type = NLMSG_ERROR;
    std::vector<uint8_t> bytes(h.nlmsg_len, 0);
    std::memcpy(bytes.data(), &h, sizeof h);
    std::memcpy(bytes.data() + sizeof h, &code, 4);
    return decoded(bytes, 0);
  };
  for (const int32_t code : {std::numeric_limits<int32_t>::min(), -4096, 1, 22}) {
    const auto out = with_code(code);
    ASSERT_EQ(out.size(), 1u) << code;
    EXPECT_EQ(out[0].kind, MessageKind::kMalformed) << code;
    EXPECT_EQ(out[0].problem, "error code " + std::to_string(code) + " is not -errno");
  }
  const auto ack = with_code(0);
  EXPECT_EQ(ack[0].kind, MessageKind::kError);
  EXPECT_EQ(ack[0].error, 0);
  const auto max = with_code(-4095);
  EXPECT_EQ(max[0].kind, MessageKind::kError);
  EXPECT_EQ(max[0].error, 4095);
}

TEST(DevlinkDecode, UnknownAttributesCommandsAndFamiliesAreSkipped) {
  Msg m = reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, "rx", 0, 1, 1);
  m.u32(400, 7);  // an attribute a newer kernel adds
  EXPECT_EQ(first_kind(m.done()), MessageKind::kReporter);
  // Another devlink command (a parameter's notification), and another family's message.
  Msg param(kFamilyId, DEVLINK_CMD_PARAM_NEW);
  param.str(DEVLINK_ATTR_BUS_NAME, "pci");
  EXPECT_EQ(first_kind(param.done()), MessageKind::kIgnored);
  EXPECT_EQ(first_kind(fw_recovery(), kFamilyId + 1), MessageKind::kIgnored);
}

TEST(DevlinkDecode, BadLengthsAreMalformedAndNeverReadPastTheBytes) {
  const std::vector<uint8_t> good = fw_recovery();
  // A message length beyond the datagram.
  auto out = decoded(with_length(good, static_cast<uint32_t>(good.size() + 4)));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MessageKind::kMalformed);
  EXPECT_NE(out[0].problem.find("message length"), std::string::npos) << out[0].problem;
  // A message length under the header.
  EXPECT_EQ(first_kind(with_length(good, 8)), MessageKind::kMalformed);
  // Cut anywhere: never a reporter, never a crash.
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<uint8_t> part(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
    for (const Message& m : decoded(part))
      EXPECT_NE(m.kind, MessageKind::kReporter) << "cut at " << cut;
  }
  // An attribute longer than its message.
  std::vector<uint8_t> attr = good;
  const uint16_t huge = 0x7ff0;
  std::memcpy(attr.data() + 20, &huge, 2);  // the first attribute's length
  out = decoded(attr);
  EXPECT_EQ(out[0].kind, MessageKind::kMalformed);
  EXPECT_NE(out[0].problem.find("attribute"), std::string::npos) << out[0].problem;
}

TEST(DevlinkDecode, MissingPartsAndBadValuesAreMalformed) {
  Msg no_name(kFamilyId, DEVLINK_CMD_HEALTH_REPORTER_RECOVER);
  no_name.str(DEVLINK_ATTR_BUS_NAME, "pci").str(DEVLINK_ATTR_DEV_NAME, "0000:08:00.0");
  no_name.begin(DEVLINK_ATTR_HEALTH_REPORTER).u8(DEVLINK_ATTR_HEALTH_REPORTER_STATE, 1).end();
  auto out = decoded(no_name.done());
  EXPECT_EQ(out[0].kind, MessageKind::kMalformed);
  EXPECT_EQ(out[0].problem, "no reporter name");

  Msg no_nest(kFamilyId, DEVLINK_CMD_HEALTH_REPORTER_RECOVER);
  no_nest.str(DEVLINK_ATTR_BUS_NAME, "pci").str(DEVLINK_ATTR_DEV_NAME, "x");
  EXPECT_EQ(decoded(no_nest.done())[0].problem, "no reporter");

  // A name without its NUL, and a count of 2 bytes.
  {
    Msg m(kFamilyId, DEVLINK_CMD_HEALTH_REPORTER_RECOVER);
    m.u8(DEVLINK_ATTR_BUS_NAME, 'p');
    out = decoded(m.done());
    EXPECT_EQ(out[0].kind, MessageKind::kMalformed);
    EXPECT_EQ(out[0].problem, "bus name is not NUL-terminated");
  }
  {
    Msg m = reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_RECOVER, "fw", 1, 1, 0);
    m.begin(DEVLINK_ATTR_HEALTH_REPORTER).u16(DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, 3).end();
    out = decoded(m.done());
    EXPECT_EQ(out[0].kind, MessageKind::kMalformed);
    EXPECT_EQ(out[0].problem, "error count has 2 bytes, needs 8");
  }
  // An over-long name.
  EXPECT_EQ(first_kind(reporter_msg(DEVLINK_CMD_HEALTH_REPORTER_RECOVER,
                                    std::string(kMaxNameLength + 1, 'x'), 1, 1, 0)
                           .done()),
            MessageKind::kMalformed);
}

TEST(DevlinkDecode, AMalformedMessageEndsItsDatagramButNotTheOnesBefore) {
  const std::vector<uint8_t> good = fw_recovery();
  const auto out = decoded(concat({good, with_length(good, 0xffff), good}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, MessageKind::kReporter);
  EXPECT_EQ(out[1].kind, MessageKind::kMalformed);
}

TEST(DevlinkDecode, RequestsAreWhatTheKernelExpects) {
  const std::vector<uint8_t> family = family_request(5);
  nlmsghdr h{};
  std::memcpy(&h, family.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, family.size());
  EXPECT_EQ(h.nlmsg_type, GENL_ID_CTRL);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(h.nlmsg_seq, 5u);
  EXPECT_EQ(family[16], CTRL_CMD_GETFAMILY);
  // The family name attribute: length 12 ("devlink" and its NUL), type CTRL_ATTR_FAMILY_NAME.
  EXPECT_EQ(family.size(), 16u + 4u + 12u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(family.data()) + 24), "devlink");

  const std::vector<uint8_t> dump = reporter_dump_request(kFamilyId, 9);
  std::memcpy(&h, dump.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, 20u);
  EXPECT_EQ(h.nlmsg_type, kFamilyId);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(dump[16], DEVLINK_CMD_HEALTH_REPORTER_GET);
}

// The kernel's own bytes (tests/unit/data/devlink/: netdevsim on Linux 6.1, family id 21): one
// datagram of the file's messages, as a read would give them.
std::vector<uint8_t> captured(const std::string& name) {
  std::vector<uint8_t> bytes;
  for (const auto& m : rdmatest::captured_messages(RDMA_EVENTD_SOURCE_DIR, "devlink", name))
    bytes.insert(bytes.end(), m.begin(), m.end());
  EXPECT_FALSE(bytes.empty()) << name;
  return bytes;
}

constexpr uint16_t kCapturedFamily = 21;

std::string reporters_of(const std::string& name) {
  std::string out;
  for (const Message& m : decoded(captured(name), kCapturedFamily)) {
    EXPECT_NE(m.kind, MessageKind::kMalformed) << name << ": " << m.problem;
    if (m.kind == MessageKind::kDone) out += "done;";
    if (m.kind != MessageKind::kReporter) continue;
    const Reporter& r = m.reporter;
    out += r.handle() + " " + r.name + " " + std::to_string(r.state) + " " +
           std::to_string(r.error_count) + "/" + std::to_string(r.recover_count) + " " +
           std::to_string(r.grace_period_ms) + (r.auto_recover ? " auto" : "") + ";";
  }
  return out;
}

// The instances and ports of a capture, in order: "+netdevsim/netdevsim1" registered,
// "-..." unregistered, "port netdevsim/netdevsim1/0 4 eth0" a port (ifindex, netdev), "-port ..."
// deleted.
std::string objects_of(const std::string& name) {
  std::string out;
  for (const Message& m : decoded(captured(name), kCapturedFamily)) {
    EXPECT_NE(m.kind, MessageKind::kMalformed) << name << ": " << m.problem;
    if (m.kind == MessageKind::kInstance)
      out += (m.instance.added ? "+" : "-") + m.instance.handle() + ";";
    if (m.kind == MessageKind::kPort)
      out += std::string(m.port.added ? "" : "-") + "port " + m.port.handle() + "/" +
             std::to_string(m.port.index) + " " + std::to_string(m.port.netdev_ifindex) + " " +
             m.port.netdev + ";";
  }
  return out;
}

TEST(DevlinkDecodeCaptured, InstancesAndPortsComeAndGoOnLinux61) {
  EXPECT_EQ(objects_of("new_device"), "+netdevsim/netdevsim1;port netdevsim/netdevsim1/0 4 eth0;");
  EXPECT_EQ(objects_of("new_device_second"),
            "+netdevsim/netdevsim2;port netdevsim/netdevsim2/0 5 eth0;");
  const std::string del = objects_of("del_device");
  EXPECT_TRUE(del.starts_with("-port netdevsim/netdevsim2/0")) << del;
  EXPECT_TRUE(del.ends_with("-netdevsim/netdevsim2;")) << del;
}

TEST(DevlinkDecode, APortDumpsReplyIsAPortWhateverItsCommand) {
  // Kernels before 6.9 answer a port dump with DEVLINK_CMD_NEW, later ones with PORT_NEW.
  for (const uint8_t command : {uint8_t{DEVLINK_CMD_NEW}, uint8_t{DEVLINK_CMD_PORT_NEW}}) {
    Msg m(kFamilyId, command);
    m.str(DEVLINK_ATTR_BUS_NAME, "auxiliary");
    m.str(DEVLINK_ATTR_DEV_NAME, "mlx5_core.eth.0");
    m.u32(DEVLINK_ATTR_PORT_INDEX, 65535);
    m.u32(DEVLINK_ATTR_PORT_NETDEV_IFINDEX, 7);
    m.str(DEVLINK_ATTR_PORT_NETDEV_NAME, "ens1f0np0");
    const auto out = decoded(m.done());
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].kind, MessageKind::kPort) << out[0].problem;
    EXPECT_EQ(out[0].port, (Port{"auxiliary", "mlx5_core.eth.0", 65535, 7, "ens1f0np0", true}));
  }
  // A port's deletion without its index says nothing it could be about.
  Msg del(kFamilyId, DEVLINK_CMD_PORT_DEL);
  del.str(DEVLINK_ATTR_BUS_NAME, "pci");
  del.str(DEVLINK_ATTR_DEV_NAME, "0000:08:00.0");
  EXPECT_EQ(first_kind(del.done()), MessageKind::kMalformed);
}

TEST(DevlinkDecode, NamesWithBytesNoKernelNameHasAreMalformed) {
  for (const char* bad : {"eth0\n", "a/b", "x y", "\x1b[31m"}) {
    Msg m(kFamilyId, DEVLINK_CMD_PORT_NEW);
    m.str(DEVLINK_ATTR_BUS_NAME, "pci");
    m.str(DEVLINK_ATTR_DEV_NAME, "0000:08:00.0");
    m.u32(DEVLINK_ATTR_PORT_INDEX, 1);
    m.str(DEVLINK_ATTR_PORT_NETDEV_NAME, bad);
    EXPECT_EQ(first_kind(m.done()), MessageKind::kMalformed) << bad;
  }
}

TEST(DevlinkDecodeCaptured, TheControllersAnswerOnLinux61) {
  const auto out = decoded(captured("getfamily_reply"), 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, MessageKind::kFamily) << out[0].problem;
  EXPECT_EQ(out[0].family.id, kCapturedFamily);
  EXPECT_EQ(out[0].family.config_group, 5u);
}

TEST(DevlinkDecodeCaptured, ReportsRecoveriesAndDumpsOfNetdevsim) {
  // Each capture and the reporters it decodes to.
  const std::pair<const char*, const char*> captures[] = {
      {"report_error", "netdevsim/netdevsim1 dummy 1 1/0 0 auto;"},
      {"recover_ok", "netdevsim/netdevsim1 dummy 0 1/1 0 auto;"},
      {"stuck_report", "netdevsim/netdevsim1 dummy 1 2/1 0 auto;"},
      {"stuck_report_canceled", "netdevsim/netdevsim1 dummy 1 3/1 0 auto;"},
      {"recover_manual", "netdevsim/netdevsim1 dummy 0 3/2 0 auto;"},
      {"second_report_error", "netdevsim/netdevsim2 dummy 1 1/0 0 auto;"},
      // The dumps: netdevsim's two reporters ("empty" has no recovery), then the end.
      {"dump_healthy",
       "netdevsim/netdevsim1 empty 0 0/0 0;netdevsim/netdevsim1 dummy 0 0/0 0 auto;done;"},
      {"dump_error_state",
       "netdevsim/netdevsim1 empty 0 0/0 0;netdevsim/netdevsim1 dummy 1 2/1 0 auto;done;"},
      // A device's creation and deletion: many messages, none a reporter's, none malformed.
      {"new_device", ""},
      {"del_device", ""},
  };
  for (const auto& [capture, reporters] : captures)
    EXPECT_EQ(reporters_of(capture), reporters) << capture;
}

}  // namespace
}  // namespace rdma_eventd::daemon::devlink
