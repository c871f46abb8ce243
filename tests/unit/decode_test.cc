#include "core/decode.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

TEST(Decode, PortEventsTakeTheirPortFromTheElement) {
  const DecodedEvent ev = decode_event({event_type::kPortErr, 2}, 2);
  EXPECT_EQ(ev.kind, EventKind::kPortErr);
  EXPECT_EQ(ev.type, 10);
  EXPECT_EQ(ev.port, 2u);
}

TEST(Decode, EveryNamedTypeMapsToItsKind) {
  const std::pair<uint32_t, EventKind> cases[] = {
      {9, EventKind::kPortActive},         {10, EventKind::kPortErr},
      {11, EventKind::kLidChange},         {12, EventKind::kPkeyChange},
      {13, EventKind::kSmChange},          {17, EventKind::kClientReregister},
      {18, EventKind::kGidChange},         {8, EventKind::kDeviceFatal},
      {20, EventKind::kDeviceSpeedChange},
  };
  for (auto [type, kind] : cases)
    EXPECT_EQ(decode_event({type, 1}, 1).kind, kind) << type;
}

TEST(Decode, DeviceScopedEventsKeepTheirRawElement) {
  // 20 (device_speed_change) by number: rdma-core 44's verbs.h does not name it, and its
  // libibverbs passes it through.
  const std::pair<uint32_t, EventKind> device_events[] = {
      {event_type::kDeviceFatal, EventKind::kDeviceFatal},
      {20, EventKind::kDeviceSpeedChange},
  };
  for (const auto& [type, kind] : device_events) {
    // 0 for an unplug, 1 for a firmware error; an element that happens to be a port number
    // does not make it a port event.
    for (const uint32_t element : {0u, 1u}) {
      const DecodedEvent ev = decode_event({type, element}, 2);
      EXPECT_EQ(ev.kind, kind) << type << " " << element;
      EXPECT_EQ(ev.type, static_cast<int>(type)) << type << " " << element;
      EXPECT_EQ(ev.port, 0u) << type << " " << element;
      EXPECT_EQ(ev.element, element) << type << " " << element;
    }
  }
}

TEST(Decode, UnknownTypeIsKeptWithItsNumberAndPort) {
  // 21: a type no kernel sends yet; a later one may, and it is published with its number.
  const DecodedEvent ev = decode_event({21, 1}, 1);
  EXPECT_EQ(ev.kind, EventKind::kUnknown);
  EXPECT_EQ(ev.type, 21);
  EXPECT_EQ(ev.port, 1u);
}

TEST(Decode, AnOutOfRangePortIsNotTakenAsAPort) {
  const DecodedEvent ev = decode_event({event_type::kLidChange, 7}, 2);
  EXPECT_EQ(ev.kind, EventKind::kLidChange);
  EXPECT_EQ(ev.port, 0u);
  EXPECT_EQ(ev.element, 7u);
}

TEST(Decode, AffiliatedEventsAreNeverReadAsPorts) {
  // QP_FATAL's element is a pointer we do not own: decoded, never dereferenced, no port.
  for (uint32_t type : {0u, 1u, 7u, 14u, 15u, 16u, 19u}) {
    const DecodedEvent ev = decode_event({type, 0x7f00deadbeefull}, 2);
    EXPECT_EQ(ev.kind, EventKind::kUnknown) << type;
    EXPECT_EQ(ev.port, 0u) << type;
    EXPECT_EQ(ev.element, 0u) << type;
    EXPECT_TRUE(is_affiliated(type));
  }
  for (uint32_t type : {8u, 9u, 13u, 17u, 18u, 20u})
    EXPECT_FALSE(is_affiliated(type)) << type;
}

TEST(Decode, PortAttributesBecomeTheSchemasValues) {
  const RawPortAttr raw{.state = 4,
                        .phys_state = 5,
                        .link_layer = 1,
                        .active_mtu = 5,
                        .active_width = 2,
                        .active_speed = 64,
                        .lid = 17,
                        .sm_lid = 1,
                        .sm_sl = 3,
                        .lmc = 1};
  const PortInfo p = decode_port(1, raw);
  PortInfo want;
  want.port = 1;
  want.link_layer = LinkLayer::kInfiniband;
  want.state = PortState::kActive;
  want.phys_state = PhysState::kLinkUp;
  want.lid = 17;
  want.sm_lid = 1;
  want.sm_sl = 3;
  want.lmc = 1;
  want.active_mtu = 4096;
  want.lanes = 4;
  want.speed = LinkSpeed::kHdr;
  EXPECT_EQ(p, want);
  EXPECT_EQ(p.rate_gbps(), 200);
}

}  // namespace
}  // namespace rdma_eventd::daemon
