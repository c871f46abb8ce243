#include "journal_header.h"

#include <cstring>

namespace rdma_eventd_fleet {
namespace {

// The fields' offsets (systemd's src/libsystemd/sd-journal/journal-def.h, struct Header): all
// little-endian 64-bit.
constexpr size_t kHeaderSize = 88;
constexpr size_t kEntries = 152;
constexpr size_t kHeadRealtime = 184;
constexpr size_t kTailRealtime = 192;

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

}  // namespace

std::optional<JournalHeader> parse_journal_header(const unsigned char* bytes, size_t size) {
  if (size < kJournalHeaderBytes || std::memcmp(bytes, "LPKSHHRH", 8) != 0) return std::nullopt;
  if (le64(bytes + kHeaderSize) < kJournalHeaderBytes) return std::nullopt;
  return JournalHeader{.entries = le64(bytes + kEntries),
                       .head_realtime_us = le64(bytes + kHeadRealtime),
                       .tail_realtime_us = le64(bytes + kTailRealtime)};
}

}  // namespace rdma_eventd_fleet
