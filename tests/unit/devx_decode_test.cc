#include "core/devx_decode.h"

#include <gtest/gtest.h>

#include <array>
#include <map>

#include "rdma_eventd/record.h"
#include "schema/record_json.h"
#include "schema/record_text.h"

namespace rdma_eventd::daemon::devx {
namespace {

using Eqe = std::array<uint8_t, kEqeSize>;

Eqe eqe(uint8_t type, uint8_t subtype) {
  Eqe e{};
  e[1] = type;
  e[3] = subtype;
  return e;
}

// struct mlx5_eqe_port_module: module at data byte 1, status at 3, error type at 6.
Eqe module_eqe(uint8_t module, uint8_t status, uint8_t error = 0) {
  Eqe e = eqe(kPortModuleEvent, 0);
  e[kEqeDataOffset + 1] = module;
  e[kEqeDataOffset + 3] = status;
  e[kEqeDataOffset + 6] = error;
  return e;
}

DeviceView two_port_view() {
  DeviceView v;
  v.name = "mlx5_0";
  v.node_guid = 0x248a070300a1b2c0;
  v.ports.resize(2);
  v.ports[0].info.port = 1;
  v.ports[0].info.state = PortState::kActive;
  v.ports[1].info.port = 2;
  v.ports[1].info.state = PortState::kDown;
  return v;
}

TEST(DevxDecode, ModuleStatusesAreTheirRecords) {
  EXPECT_EQ(decode_event(module_eqe(0, 1)).kind, EventKind::kModulePlugged);
  EXPECT_EQ(decode_event(module_eqe(0, 2)).kind, EventKind::kModuleUnplugged);
  EXPECT_EQ(decode_event(module_eqe(0, 4)).kind, EventKind::kModuleDisabled);
  const DecodedEvent err = decode_event(module_eqe(3, 3, 7));
  EXPECT_EQ(err.kind, EventKind::kModuleError);
  EXPECT_EQ(err.vendor.module, 3u);
  EXPECT_EQ(err.vendor.error_type, "bad_cable");
  EXPECT_EQ(err.vendor.error_code, 7u);
  // Only the status's low nibble counts, as in the kernel.
  EXPECT_EQ(decode_event(module_eqe(0, 0xf2)).kind, EventKind::kModuleUnplugged);
}

TEST(DevxDecode, EveryModuleErrorHasItsName) {
  const std::map<uint8_t, std::string> names = {
      {0x0, "power_budget_exceeded"},
      {0x1, "long_range_for_non_mlnx"},
      {0x2, "bus_stuck"},
      {0x3, "no_eeprom_retry_timeout"},
      {0x4, "enforce_part_number_list"},
      {0x5, "unknown_identifier"},
      {0x6, "high_temperature"},
      {0x7, "bad_cable"},
      {0xc, "pcie_power_slot_exceeded"},
      {0x9, "unknown"},
  };
  for (const auto& [code, name] : names)
    EXPECT_EQ(decode_event(module_eqe(0, 3, code)).vendor.error_type, name) << int(code);
}

TEST(DevxDecode, AnUnknownModuleStatusIsAVendorEventWithItsBytes) {
  const DecodedEvent d = decode_event(module_eqe(1, 9));
  EXPECT_EQ(d.kind, EventKind::kVendorEvent);
  EXPECT_EQ(d.vendor.type, 0x16u);
  EXPECT_EQ(d.vendor.data, "00010009" + std::string(48, '0'));
}

TEST(DevxDecode, TemperatureSensorsComeFromTheWholeBitmap) {
  Eqe e = eqe(kTempWarnEvent, 0);
  e[kEqeDataOffset + 0] = 0x80;   // msb word, top bit: sensor 127
  e[kEqeDataOffset + 15] = 0x05;  // lsb word, low bits: sensors 0 and 2
  e[kEqeDataOffset + 8] = 0x01;   // lsb word, top byte: sensor 56
  const DecodedEvent d = decode_event(e);
  EXPECT_EQ(d.kind, EventKind::kTemperatureWarning);
  EXPECT_EQ(d.vendor.sensors, (std::vector<uint32_t>{0, 2, 56, 127}));
}

TEST(DevxDecode, GeneralEventSubtypes) {
  EXPECT_EQ(decode_event(eqe(kGeneralEvent, 5)).kind, EventKind::kPciPowerChange);
  EXPECT_EQ(decode_event(eqe(kGeneralEvent, 7)).kind, EventKind::kFirmwareEvent);
  EXPECT_EQ(decode_event(eqe(kGeneralEvent, 8)).kind, EventKind::kFirmwareEvent);
  const DecodedEvent delay_drop = decode_event(eqe(kGeneralEvent, 1));
  EXPECT_EQ(delay_drop.kind, EventKind::kVendorEvent);
  EXPECT_EQ(delay_drop.vendor.subtype, 1u);
}

TEST(DevxDecode, AnythingElseIsAVendorEventNeverDropped) {
  Eqe e = eqe(0x27, 0x42);
  for (size_t i = 0; i < kEqeDataSize; ++i)
    e[kEqeDataOffset + i] = static_cast<uint8_t>(i);
  const DecodedEvent d = decode_event(e);
  EXPECT_EQ(d.kind, EventKind::kVendorEvent);
  EXPECT_EQ(d.vendor.type, 0x27u);
  EXPECT_EQ(d.vendor.subtype, 0x42u);
  EXPECT_EQ(d.vendor.data, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b");
}

TEST(DevxDecode, AShortEntryReadsAsZerosPastItsEnd) {
  const std::array<uint8_t, 2> two = {0, kTempWarnEvent};
  const DecodedEvent d = decode_event(two);
  EXPECT_EQ(d.kind, EventKind::kTemperatureWarning);
  EXPECT_TRUE(d.vendor.sensors.empty());
}

TEST(DevxDecode, ModuleMapsToItsPortWhenTheDeviceHasIt) {
  EXPECT_EQ(port_of_module(0, 2), 1u);
  EXPECT_EQ(port_of_module(1, 2), 2u);
  EXPECT_EQ(port_of_module(2, 2), 0u);
  const DeviceView v = two_port_view();
  const Record r = vendor_record(v, decode_event(module_eqe(1, 2)));
  EXPECT_EQ(r.event, EventKind::kModuleUnplugged);
  EXPECT_EQ(r.port, 2u);
  ASSERT_TRUE(r.port_info);
  EXPECT_EQ(r.port_info->state, PortState::kDown);
  EXPECT_EQ(r.previous, r.port_info);
  const Record far = vendor_record(v, decode_event(module_eqe(7, 2)));
  EXPECT_EQ(far.port, 0u);
  EXPECT_FALSE(far.port_info);
  const Record temp = vendor_record(v, decode_event(eqe(kTempWarnEvent, 0)));
  EXPECT_FALSE(temp.port_info);
  EXPECT_EQ(temp.event_type, -1);
}

TEST(DevxDecode, RecordsRoundTripThroughJson) {
  const DeviceView v = two_port_view();
  Eqe t = eqe(kTempWarnEvent, 0);
  t[kEqeDataOffset + 15] = 0x09;
  for (const Eqe& e : {module_eqe(0, 1), module_eqe(1, 3, 6), module_eqe(0, 4), module_eqe(1, 9), t,
                       eqe(kGeneralEvent, 5), eqe(kGeneralEvent, 7), eqe(0x19, 2)}) {
    Record r = vendor_record(v, decode_event(e));
    r.seq = 5;
    r.stream = "s";
    r.host = "h";
    r.node_guid = "248a:0703:00a1:b2c0";
    std::string error;
    auto back = record_from_json(to_json(r), &error);
    ASSERT_TRUE(back) << error << " " << to_json(r);
    EXPECT_EQ(*back, r) << to_json(r);
  }
}

TEST(DevxDecode, RecordTexts) {
  const DeviceView v = two_port_view();
  EXPECT_EQ(describe(vendor_record(v, decode_event(module_eqe(0, 2)))),
            "mlx5_0 port 1: module 0 unplugged, port ACTIVE");
  EXPECT_EQ(describe(vendor_record(v, decode_event(module_eqe(1, 3, 2)))),
            "mlx5_0 port 2: module 1 error: bus_stuck (2), port DOWN");
  Eqe t = eqe(kTempWarnEvent, 0);
  t[kEqeDataOffset + 15] = 0x06;
  EXPECT_EQ(describe(vendor_record(v, decode_event(t))),
            "mlx5_0: temperature over threshold on sensors 1, 2");
  EXPECT_EQ(describe(vendor_record(v, decode_event(eqe(0x19, 2)))),
            "mlx5_0: vendor event type 0x19 subtype 0x02, data "
            "00000000000000000000000000000000000000000000000000000000");
}

TEST(DevxCaps, LegacyFirmwareAllowsOnlyPortChangeWhichIsNotSubscribed) {
  EventCaps legacy;
  EXPECT_TRUE(legacy.allows(kPortChange));
  EXPECT_FALSE(legacy.allows(kPortModuleEvent));
  EXPECT_TRUE(events_to_subscribe(legacy).empty());
}

TEST(DevxCaps, TheMaskDecidesAndPortChangeStaysWithTheAsyncEvents) {
  EventCaps caps;
  caps.event_cap = true;
  caps.unaffiliated[0] =
      uint64_t{1} << kPortChange | uint64_t{1} << kTempWarnEvent | uint64_t{1} << kGeneralEvent;
  EXPECT_EQ(events_to_subscribe(caps), (std::vector<uint16_t>{kTempWarnEvent, kGeneralEvent}));
  EXPECT_EQ(event_names(events_to_subscribe(caps)), "temp_warn_event,general_event");
  caps.unaffiliated[0] |= uint64_t{1} << kPortModuleEvent;
  EXPECT_EQ(events_to_subscribe(caps).size(), 3u);
}

TEST(DevxCaps, RepliesAreReadAtMlx5IfcOffsets) {
  const auto cmd = query_hca_cap_command(kCapDeviceEvent);
  EXPECT_EQ(cmd[0], 0x01);
  EXPECT_EQ(cmd[1], 0x00);
  EXPECT_EQ(cmd[6], 0x00);
  EXPECT_EQ(cmd[7], 0x29);  // 0x14 << 1 | 1: current values
  std::vector<uint8_t> reply(kQueryHcaCapOutSize, 0);
  EXPECT_EQ(event_cap_from_reply(reply), false);
  reply[16 + 0x90 / 8] = 0x80;  // bit 0x90 of the page, big-endian
  EXPECT_EQ(event_cap_from_reply(reply), true);
  reply[0] = 0x03;  // BAD_PARAM
  EXPECT_FALSE(event_cap_from_reply(reply));
  reply[0] = 0;
  // user_unaffiliated_events at byte 32 of the page, big-endian words: the last byte of word 0
  // holds events 7..0, the third from its end events 23..16.
  reply[16 + 32 + 7] = 0x01 << 6;
  reply[16 + 32 + 5] = 0x01 << 6;
  const auto mask = unaffiliated_from_reply(reply);
  ASSERT_TRUE(mask);
  EXPECT_EQ((*mask)[0], uint64_t{1} << 6 | uint64_t{1} << kPortModuleEvent);
  EXPECT_FALSE(unaffiliated_from_reply(std::vector<uint8_t>(100, 0)));
}

TEST(DevxState, Names) {
  EXPECT_EQ(devx_state_name(DevxState::kActive), "active");
  EXPECT_EQ(devx_state_name(DevxState::kNoEventCap), "no_event_cap");
  EXPECT_EQ(devx_state_name(DevxState::kClosed), "closed");
}

}  // namespace
}  // namespace rdma_eventd::daemon::devx
