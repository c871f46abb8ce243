#include "core/port_rate.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace rdma_eventd::daemon {
namespace {

TEST(SysfsRate, ReadsWhatRateShowPrints) {
  // rate_show (drivers/infiniband/core/sysfs.c): "%d%s Gb/sec (%dX%s)\n".
  EXPECT_EQ(parse_sysfs_rate("800 Gb/sec (4X XDR)\n"), (SysfsRate{8000, 4, LinkSpeed::kXdr}));
  EXPECT_EQ(parse_sysfs_rate("400 Gb/sec (4X NDR)"), (SysfsRate{4000, 4, LinkSpeed::kNdr}));
  EXPECT_EQ(parse_sysfs_rate("200 Gb/sec (1X XDR)\n"), (SysfsRate{2000, 1, LinkSpeed::kXdr}));
  EXPECT_EQ(parse_sysfs_rate("2400 Gb/sec (12X XDR)\n"), (SysfsRate{24000, 12, LinkSpeed::kXdr}));
  EXPECT_EQ(parse_sysfs_rate("2.5 Gb/sec (1X SDR)\n"), (SysfsRate{25, 1, LinkSpeed::kSdr}));
  EXPECT_EQ(parse_sysfs_rate("56 Gb/sec (4X FDR)\n"), (SysfsRate{560, 4, LinkSpeed::kFdr}));
  EXPECT_EQ(parse_sysfs_rate("40 Gb/sec (4X FDR10)\n"), (SysfsRate{400, 4, LinkSpeed::kFdr10}));
  EXPECT_EQ(parse_sysfs_rate("100 Gb/sec (2X HDR)\n"), (SysfsRate{1000, 2, LinkSpeed::kHdr}));
  // Kernels before SDR had a name printed none for it; a name this version lacks is no speed.
  EXPECT_EQ(parse_sysfs_rate("10 Gb/sec (4X)\n"), (SysfsRate{100, 4, LinkSpeed::kUnknown}));
  EXPECT_EQ(parse_sysfs_rate("1600 Gb/sec (4X GDR)\n"), (SysfsRate{16000, 4, LinkSpeed::kUnknown}));
}

TEST(SysfsRate, RefusesAnythingElse) {
  const char* const hostile[] = {
      "",
      "\n",
      "800",
      "800 Gb/sec",
      "800 Gb/sec (4X XDR",
      "800 Gb/sec (4X XDR)\n\n",
      "800 Gb/sec (4X XDR) ",
      " 800 Gb/sec (4X XDR)",
      "800 Gb/sec  (4X XDR)",
      "800 Gb/sec (4x XDR)",
      "800 Gb/sec (4X xdr)",
      "800 Gb/sec (4X  XDR)",
      "800 Gb/sec (4X )",
      "800 Gb/s (4X XDR)",
      "-800 Gb/sec (4X XDR)",
      "+800 Gb/sec (4X XDR)",
      "0800 Gb/sec (4X XDR)",
      "0 Gb/sec (4X)",
      "800.0 Gb/sec (4X XDR)",
      "800.5 Gb/sec (4X XDR)",
      "800 Gb/sec (3X XDR)",
      "800 Gb/sec (0X XDR)",
      "800 Gb/sec (04X XDR)",
      "800 Gb/sec (123X XDR)",
      "99999999999999999999 Gb/sec (4X XDR)",
      "1234567 Gb/sec (4X)",
      "800 Gb/sec (4X XDRXDRXDR)",
      "800 Gb/sec (4X X-DR)",
      "800 Gb/sec (4X XDR)garbage",
      // A known speed whose rate disagrees with its lanes: the text says nothing reliable.
      "801 Gb/sec (4X XDR)",
      "200 Gb/sec (4X XDR)",
      "800 Gb/sec (1X XDR)",
  };
  for (const char* text : hostile)
    EXPECT_EQ(parse_sysfs_rate(text), std::nullopt) << '"' << text << '"';
  const std::string with_nul("800 Gb/sec (4X XDR)\0", 20);
  EXPECT_EQ(parse_sysfs_rate(with_nul), std::nullopt);
}

TEST(SysfsRate, EveryTruncationOfAGoodTextIsRefused) {
  const std::string good = "800 Gb/sec (4X XDR)\n";
  for (size_t n = 0; n + 1 < good.size(); ++n)
    EXPECT_EQ(parse_sysfs_rate(good.substr(0, n)), std::nullopt) << good.substr(0, n);
}

TEST(LaneSpeed, ActiveSpeedWhenItIsAKnownCode) {
  const SysfsRate xdr{8000, 4, LinkSpeed::kXdr};
  EXPECT_EQ(choose_lane_speed(64, std::nullopt), LinkSpeed::kHdr);
  EXPECT_EQ(choose_lane_speed(128, xdr), LinkSpeed::kNdr);  // the query's word first
  EXPECT_EQ(choose_lane_speed(1, std::nullopt), LinkSpeed::kSdr);
}

TEST(LaneSpeed, XdrFromSysfsWhereActiveSpeedIsZero) {
  // The kernel truncates 0x100 to 0 in the 8-bit field (copy_port_attr_to_resp).
  EXPECT_EQ(choose_lane_speed(0, SysfsRate{8000, 4, LinkSpeed::kXdr}), LinkSpeed::kXdr);
  EXPECT_EQ(choose_lane_speed(0, SysfsRate{2000, 1, LinkSpeed::kXdr}), LinkSpeed::kXdr);
}

TEST(LaneSpeed, UnknownWhenNeitherSays) {
  EXPECT_EQ(choose_lane_speed(0, std::nullopt), LinkSpeed::kUnknown);
  EXPECT_EQ(choose_lane_speed(3, std::nullopt), LinkSpeed::kUnknown);
  // rate_show defaults an invalid speed to SDR: beside an active_speed of 0 that is no speed.
  EXPECT_EQ(choose_lane_speed(0, SysfsRate{100, 4, LinkSpeed::kSdr}), LinkSpeed::kUnknown);
  EXPECT_EQ(choose_lane_speed(0, SysfsRate{4000, 4, LinkSpeed::kNdr}), LinkSpeed::kUnknown);
  EXPECT_EQ(choose_lane_speed(0, SysfsRate{16000, 4, LinkSpeed::kUnknown}), LinkSpeed::kUnknown);
  EXPECT_EQ(choose_lane_speed(0x100, std::nullopt), LinkSpeed::kUnknown);  // not an 8-bit value
}

TEST(LaneSpeed, XdrIsTheOnlySpeedBeyondTheEightBitField) {
  EXPECT_TRUE(beyond_active_speed(LinkSpeed::kXdr));
  for (const LinkSpeed s : {LinkSpeed::kUnknown, LinkSpeed::kSdr, LinkSpeed::kHdr, LinkSpeed::kNdr})
    EXPECT_FALSE(beyond_active_speed(s)) << link_speed_name(s);
  EXPECT_EQ(lane_gbps(LinkSpeed::kXdr), 200);
  EXPECT_EQ(link_speed_name(LinkSpeed::kXdr), "xdr");
  EXPECT_EQ(link_speed_from_name("xdr"), LinkSpeed::kXdr);
}

TEST(EffectiveSpeed, UnknownWhereTheLibraryHasNoCall) {
  const EffectiveSpeed e = effective_speed_of(2, {});
  EXPECT_EQ(e.port, 2u);
  EXPECT_FALSE(e.gbps);
  EXPECT_EQ(e.unknown, "not_in_libibverbs");
}

TEST(EffectiveSpeed, TheCallsAnswerIn100MbpsUnits) {
  uint32_t asked = 0;
  const EffectiveSpeed e = effective_speed_of(1, [&](uint32_t port, uint64_t* speed) {
    asked = port;
    *speed = 4000;  // 400 Gb/s
    return 0;
  });
  EXPECT_EQ(asked, 1u);
  EXPECT_EQ(e.gbps, 400.0);
  EXPECT_EQ(e.unknown, "");
  EXPECT_EQ(effective_speed_of(1, [](uint32_t, uint64_t* s) { return *s = 255, 0; }).gbps, 25.5);
}

TEST(EffectiveSpeed, AFailedCallIsUnknownWithItsReason) {
  // The value is not read when the call fails, whatever it left there.
  const auto failing = [](int err) {
    return [err](uint32_t, uint64_t* speed) { return *speed = 4000, err; };
  };
  for (const int err : {EOPNOTSUPP, EPROTONOSUPPORT}) {
    const EffectiveSpeed e = effective_speed_of(1, failing(err));
    EXPECT_FALSE(e.gbps) << err;
    EXPECT_EQ(e.unknown, "not_supported") << err;
  }
  for (const int err : {EIO, EINVAL, ETIMEDOUT}) {
    const EffectiveSpeed e = effective_speed_of(1, failing(err));
    EXPECT_FALSE(e.gbps) << err;
    EXPECT_EQ(e.unknown, "query_failed") << err;
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon
