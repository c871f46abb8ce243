#include "core/table_diff.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

const GidEntry kLinkLocalV1{0, "fe80::1", GidType::kRoceV1, "ens1f0"};
const GidEntry kLinkLocalV2{1, "fe80::1", GidType::kRoceV2, "ens1f0"};
const GidEntry kIpV1{2, "::ffff:192.168.1.5", GidType::kRoceV1, "ens1f0"};
const GidEntry kIpV2{3, "::ffff:192.168.1.5", GidType::kRoceV2, "ens1f0"};

TEST(GidDiff, AnAddedIpShowsBothItsEntries) {
  const GidDiff d =
      diff_gids({kLinkLocalV1, kLinkLocalV2}, {kLinkLocalV1, kLinkLocalV2, kIpV1, kIpV2});
  EXPECT_EQ(d.added, (std::vector<GidEntry>{kIpV1, kIpV2}));
  EXPECT_TRUE(d.removed.empty());
}

TEST(GidDiff, ARemovedEntryIsReportedWithItsOldContents) {
  const GidDiff d = diff_gids({kLinkLocalV1, kIpV1, kIpV2}, {kLinkLocalV1, kIpV2});
  EXPECT_TRUE(d.added.empty());
  EXPECT_EQ(d.removed, (std::vector<GidEntry>{kIpV1}));
}

TEST(GidDiff, AReplacedEntryIsRemovedAndAdded) {
  GidEntry replaced = kIpV1;
  replaced.gid = "::ffff:192.168.1.6";
  const GidDiff d = diff_gids({kIpV1}, {replaced});
  EXPECT_EQ(d.removed, (std::vector<GidEntry>{kIpV1}));
  EXPECT_EQ(d.added, (std::vector<GidEntry>{replaced}));
}

TEST(GidDiff, IdenticalTablesDiffToNothing) {
  const GidDiff d = diff_gids({kLinkLocalV1, kIpV2}, {kLinkLocalV1, kIpV2});
  EXPECT_TRUE(d.added.empty());
  EXPECT_TRUE(d.removed.empty());
}

TEST(PkeyDiff, ReportsChangedSlotsButNeverEmptyOnes) {
  const PkeyDiff d = diff_pkeys({0xffff, 0x8001, 0, 0}, {0xffff, 0, 0x8002, 0});
  EXPECT_EQ(d.removed, (std::vector<PkeyEntry>{{1, 0x8001}}));
  EXPECT_EQ(d.added, (std::vector<PkeyEntry>{{2, 0x8002}}));
}

TEST(PkeyDiff, ACHangedValueInOneSlotIsRemovedAndAdded) {
  const PkeyDiff d = diff_pkeys({0xffff, 0x8001}, {0xffff, 0x0001});
  EXPECT_EQ(d.removed, (std::vector<PkeyEntry>{{1, 0x8001}}));
  EXPECT_EQ(d.added, (std::vector<PkeyEntry>{{1, 0x0001}}));
}

TEST(PkeyDiff, TablesOfDifferentLengthsCompareAsIfPaddedWithEmptySlots) {
  const PkeyDiff d = diff_pkeys({0xffff}, {0xffff, 0x8003});
  EXPECT_EQ(d.added, (std::vector<PkeyEntry>{{1, 0x8003}}));
  EXPECT_TRUE(d.removed.empty());
}

}  // namespace
}  // namespace rdma_eventd::daemon
