// Fuzzes the daemon's three netlink decoders, which share their framing (core/netlink_wire.h):
// devlink's (daemon/core/devlink_decode.cc), what the daemon makes of one datagram read from its
// devlink socket, ethtool's (daemon/core/ethtool_wire.cc), the same bytes read from the generic
// netlink socket it asks for a RoCE netdev's PHY statistics, and the RDMA netlink monitor's
// (daemon/core/rdma_netlink_decode.cc), the same bytes read from its NETLINK_RDMA socket (the
// kernel's, or a stand-in's). The first two input bytes are the generic-netlink family id the
// daemon resolved (devlink's or ethtool's; 0: before it knows it), the rest the
// datagram. Beyond "no crash, no undefined behaviour, no read past the bytes", for both:
//  - the messages decoded are at most one per 16 bytes, and only the last may be malformed by
//    its length (a bad length ends the datagram);
//  - an error is 0 (an acknowledgement) or an errno, 1 to 4095;
//  - all decoders frame the datagram alike: the same number of messages, with the same
//    headers, and the same length problem for the last one if any;
// and for devlink:
//  - a reporter has a bus, a device and a name, each 1 to 128 bytes with no NUL, a port index
//    of -1 or a u32, a state of 0 to 255; its handle is "bus/device";
//  - a reporter's record, as the daemon builds it, writes as JSON that reads back and writes
//    again as the same line, and has a text;
// and for ethtool:
//  - a FEC or PHY statistics reply is of the ethtool family, names a netdev of at most 127
//    bytes with no NUL, a FEC mode of "", "off", "rs", "baser" or "llrs"; a FEC reply has no
//    symbol errors, a PHY statistics reply no FEC counters or mode; the controller's answer is
//    the controller's;
// and for the RDMA monitor:
//  - a notice is of the monitor's type, names a device of 1 to 63 bytes or none, a netdev of 1
//    to 15 or none (neither with a control character, a space or '/'), a port and an ifindex of -1
//    or a u32, and describes itself in one line;
//  - a system answer is of the system query's type.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/devlink_decode.h"
#include "core/ethtool_wire.h"
#include "core/rdma_netlink_decode.h"
#include "fuzz_check.h"
#include "rdma_eventd/record.h"
#include "schema/record_json.h"
#include "schema/record_text.h"

namespace {

using namespace rdma_eventd;
using namespace rdma_eventd::daemon;

bool name_ok(const std::string& s) {
  return !s.empty() && s.size() <= devlink::kMaxNameLength && s.find('\0') == std::string::npos;
}

void check_reporter(const devlink::Reporter& r) {
  FUZZ_CHECK(name_ok(r.bus), r.bus);
  FUZZ_CHECK(name_ok(r.device), r.device);
  FUZZ_CHECK(name_ok(r.name), r.name);
  FUZZ_CHECK(r.port_index >= -1 && r.port_index <= int64_t{UINT32_MAX}, r.name);
  FUZZ_CHECK(r.state >= 0 && r.state <= 255, r.name);
  FUZZ_CHECK(r.handle() == r.bus + "/" + r.device, r.handle());

  Record rec;
  rec.seq = 1;
  rec.stream = "00000000000000000000000000000000";
  rec.host = "h";
  rec.event = EventKind::kDevlinkHealth;
  DevlinkHealthEvent e;
  e.handle = r.handle();
  e.port_index = r.port_index;
  e.reporter = r.name;
  e.state = r.state == devlink::kStateHealthy ? "healthy"
            : r.state == devlink::kStateError ? "error"
                                              : "unknown";
  e.change = "error";
  e.error_count = r.error_count;
  e.recover_count = r.recover_count;
  e.grace_period_ms = r.grace_period_ms;
  e.auto_recover = r.auto_recover;
  rec.devlink = e;
  const std::string line = to_json(rec);
  std::string error;
  const auto back = record_from_json(line, &error);
  FUZZ_CHECK(back.has_value(), error + ": " + line);
  // Names that are not UTF-8 are written with U+FFFD: the line is a fixed point.
  FUZZ_CHECK(!back || to_json(*back) == line, line);
  FUZZ_CHECK(!describe(rec).empty(), line);
}

// Another decoder's messages of the datagram that devlink's decoder made `framed` of: framed
// alike (as many messages, the same headers, the same length problem and only on the last),
// each malformed one saying why and each error an errno.
template <typename Message>
void check_framed_alike(const std::vector<Message>& out,
                        const std::vector<devlink::Message>& framed) {
  using Kind = decltype(Message::kind);
  FUZZ_CHECK(out.size() == framed.size(), std::to_string(out.size()));
  for (size_t i = 0; i < out.size() && i < framed.size(); ++i) {
    const Message& m = out[i];
    const devlink::Message& d = framed[i];
    FUZZ_CHECK(m.type == d.type && m.flags == d.flags && m.seq == d.seq && m.pid == d.pid,
               "the same header");
    const bool bad_length = m.problem.starts_with("message length");
    FUZZ_CHECK(bad_length == d.problem.starts_with("message length"), m.problem);
    if (bad_length) FUZZ_CHECK(m.problem == d.problem && i + 1 == out.size(), m.problem);
    if (m.kind == Kind::kMalformed) FUZZ_CHECK(!m.problem.empty(), "a malformed message says why");
    if (m.kind == Kind::kError)
      FUZZ_CHECK(m.error >= 0 && m.error <= 4095, std::to_string(m.error));
  }
}

void check_rdma(std::span<const uint8_t> datagram, const std::vector<devlink::Message>& framed) {
  namespace rn = rdma_netlink;
  std::vector<rn::Message> out;
  rn::decode(datagram, out);
  check_framed_alike(out, framed);
  for (const rn::Message& m : out) {
    if (m.kind == rn::MessageKind::kSystem) FUZZ_CHECK(m.type == rn::kSysGetType, "system");
    if (m.kind == rn::MessageKind::kMonitor) {
      const rn::Notice& n = m.notice;
      FUZZ_CHECK(m.type == rn::kMonitorType, "a notice is of the monitor's type");
      FUZZ_CHECK(n.device.size() <= rn::kMaxDeviceName && n.device.find('\0') == std::string::npos,
                 n.device);
      FUZZ_CHECK(n.netdev.size() <= rn::kMaxNetdevName && n.netdev.find('\0') == std::string::npos,
                 n.netdev);
      FUZZ_CHECK(n.port >= -1 && n.port <= int64_t{UINT32_MAX}, std::to_string(n.port));
      FUZZ_CHECK(n.netdev_index >= -1 && n.netdev_index <= int64_t{UINT32_MAX},
                 std::to_string(n.netdev_index));
      const std::string text = rn::describe(n);
      FUZZ_CHECK(!text.empty() && text.find('\n') == std::string::npos, text);
    }
  }
}

void check_ethtool(std::span<const uint8_t> datagram, uint16_t family,
                   const std::vector<devlink::Message>& framed) {
  namespace et = ethtool;
  std::vector<et::Message> out;
  et::decode(datagram, family, out);
  check_framed_alike(out, framed);
  for (const et::Message& m : out) {
    if (m.kind == et::MessageKind::kFamily) FUZZ_CHECK(m.type == 0x10, "the controller's");
    if (m.kind != et::MessageKind::kFec && m.kind != et::MessageKind::kPhyStats) continue;
    FUZZ_CHECK(family != 0 && m.type == family, "a reply is of the ethtool family");
    FUZZ_CHECK(m.ifname.size() <= et::kMaxDevName && m.ifname.find('\0') == std::string::npos,
               m.ifname);
    const et::PhyStats& s = m.stats;
    FUZZ_CHECK(s.fec_mode.empty() || s.fec_mode == "off" || s.fec_mode == "rs" ||
                   s.fec_mode == "baser" || s.fec_mode == "llrs",
               s.fec_mode);
    if (m.kind == et::MessageKind::kFec) FUZZ_CHECK(!s.symbol_errors, "a FEC reply");
    if (m.kind == et::MessageKind::kPhyStats)
      FUZZ_CHECK(!s.fec_corrected_blocks && !s.fec_uncorrectable_blocks && !s.fec_corrected_bits &&
                     s.fec_mode.empty(),
                 "a PHY statistics reply");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const auto family = static_cast<uint16_t>(data[0] | (data[1] << 8));
  const std::span<const uint8_t> datagram(data + 2, size - 2);
  std::vector<devlink::Message> out;
  devlink::decode(datagram, family, out);
  FUZZ_CHECK(out.size() <= datagram.size() / 16, std::to_string(out.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const devlink::Message& m = out[i];
    if (m.kind == devlink::MessageKind::kMalformed) {
      FUZZ_CHECK(!m.problem.empty(), "a malformed message says why");
      if (m.problem.starts_with("message length"))
        FUZZ_CHECK(i + 1 == out.size(), "a bad length ends the datagram");
    }
    if (m.kind == devlink::MessageKind::kError)
      FUZZ_CHECK(m.error >= 0 && m.error <= 4095, std::to_string(m.error));
    if (m.kind == devlink::MessageKind::kReporter) {
      FUZZ_CHECK(family != 0 && m.type == family, "a reporter is of the devlink family");
      check_reporter(m.reporter);
    }
  }
  check_ethtool(datagram, family, out);
  check_rdma(datagram, out);
  return 0;
}
