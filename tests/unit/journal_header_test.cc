// The journal file header as fleet/journal_header.h reads it: the fields at systemd's offsets,
// and nothing from bytes that are not a header.
#include "journal_header.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace rdma_eventd_fleet {
namespace {

void put_header_field(std::vector<unsigned char>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

// A header as systemd 252 writes it (264 bytes), with these counts and times.
std::vector<unsigned char> header_bytes(uint64_t entries, uint64_t head, uint64_t tail) {
  std::vector<unsigned char> b(264, 0xee);
  std::memcpy(b.data(), "LPKSHHRH", 8);
  put_header_field(b, 88, 264);  // header_size
  put_header_field(b, 152, entries);
  put_header_field(b, 184, head);
  put_header_field(b, 192, tail);
  return b;
}

TEST(JournalHeader, TheEntryCountAndTimesAreReadFromTheirOffsets) {
  const auto b = header_bytes(1942, 1795737608000000, 0x0102030405060708);
  const auto h = parse_journal_header(b.data(), b.size());
  ASSERT_TRUE(h);
  EXPECT_EQ(h->entries, 1942u);
  EXPECT_EQ(h->head_realtime_us, 1795737608000000u);
  EXPECT_EQ(h->tail_realtime_us, 0x0102030405060708u);  // little-endian
  // The bytes up to the last field read are enough.
  EXPECT_TRUE(parse_journal_header(b.data(), kJournalHeaderBytes));
}

TEST(JournalHeader, BytesThatAreNotAHeaderGiveNothing) {
  auto b = header_bytes(1, 2, 3);
  EXPECT_FALSE(parse_journal_header(b.data(), kJournalHeaderBytes - 1));  // cut short
  EXPECT_FALSE(parse_journal_header(b.data(), 0));
  b[7] = 'X';  // another signature
  EXPECT_FALSE(parse_journal_header(b.data(), b.size()));
  b = header_bytes(1, 2, 3);
  put_header_field(b, 88, 200);  // a header that says it ends before the fields
  EXPECT_FALSE(parse_journal_header(b.data(), b.size()));
}

}  // namespace
}  // namespace rdma_eventd_fleet
