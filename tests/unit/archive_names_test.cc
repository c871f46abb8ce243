// Archives decided by their names (fleet/archive_names.h): the name's time read exactly as
// journal_file_archive() writes it, nothing else taken for an archive, and an archive outside
// --since/--until only when its own name or its successor's says so.
#include "archive_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdma_eventd_fleet {
namespace {

const std::string kId = "5a7f00112233445566778899aabbccdd";

std::string archive(const std::string& stem, uint64_t head_us) {
  char tail[64];
  std::snprintf(tail, sizeof tail, "-%016llx-%016llx.journal", 7ULL,
                static_cast<unsigned long long>(head_us));
  return stem + "@" + kId + tail;
}

TEST(ArchiveNames, TheFirstEntrysTimeIsReadFromAnArchivesNameOnly) {
  EXPECT_EQ(archive_head_realtime(archive("/r/remote-node01", 0x62d1c5a2e1c00)), 0x62d1c5a2e1c00);
  EXPECT_EQ(archive_head_realtime(archive("remote-node01", 5)), 5);
  EXPECT_EQ(archive_head_realtime("/r/remote-node01.journal"), std::nullopt);  // the active file
  EXPECT_EQ(archive_head_realtime(archive("/r/remote-node01", 5) + "~"), std::nullopt);
  EXPECT_EQ(archive_head_realtime("/r@x/remote-node01.journal"), std::nullopt);  // '@' of a dir
  EXPECT_EQ(archive_head_realtime("/r/system@" + kId + "-0000000000000007-00000000000000.journal"),
            std::nullopt);  // 14 digits
  EXPECT_EQ(
      archive_head_realtime("/r/system@" + kId + "-0000000000000007-000000000000000A.journal"),
      std::nullopt);  // not as journald writes hex
  EXPECT_EQ(
      archive_head_realtime("/r/system@" + kId + "-0000000000000007-8000000000000000.journal"),
      std::nullopt);  // beyond int64_t
  // journald's own dirty-file name (system@HEX-HEX.journal~) and other shapes are not archives.
  EXPECT_EQ(archive_head_realtime("/r/system@0005f0e1c2d3e4f5-1234567890abcdef.journal~"),
            std::nullopt);
}

TEST(ArchiveNames, AnArchiveIsOutsideWhenItsNameOrItsSuccessorsSaysSo) {
  // node01: archives from 100, 200, 300, then its active file; node02: one archive from 150; a
  // file of another shape.
  const std::vector<ListedFile> files = {
      {archive("/r/remote-node01", 300)}, {archive("/r/remote-node01", 100)},
      {archive("/r/remote-node01", 200)}, {"/r/remote-node01.journal"},
      {archive("/r/remote-node02", 150)}, {"/r/odd.journal"},
  };
  using Flags = std::vector<bool>;
  EXPECT_EQ(outside_by_name(files, std::nullopt, std::nullopt), Flags(6, false));
  // --since 250: the archive from 100 ended before 200; the one from 200 may reach 300 (its
  // successor's first entry) and is kept; the newest archive of a name is never decided here.
  EXPECT_EQ(outside_by_name(files, 250, std::nullopt),
            (Flags{false, true, false, false, false, false}));
  // Its successor beginning exactly at --since: the archive may end at it.
  EXPECT_EQ(outside_by_name(files, 200, std::nullopt), Flags(6, false));
  EXPECT_EQ(outside_by_name(files, 201, std::nullopt),
            (Flags{false, true, false, false, false, false}));
  // --until 160: the archives from 200 and 300 begin after it; node02's at 150 does not.
  EXPECT_EQ(outside_by_name(files, std::nullopt, 160),
            (Flags{true, false, true, false, false, false}));
  EXPECT_EQ(outside_by_name(files, std::nullopt, 200),
            (Flags{true, false, false, false, false, false}));
}

}  // namespace
}  // namespace rdma_eventd_fleet
