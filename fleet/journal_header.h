// What a journal file's header says of its entries: how many, and the time of the last. The
// header is the start of the file, in the layout systemd documents as stable
// (https://systemd.io/JOURNAL_FILE_FORMAT/); sd-journal has no call for it. The reader compares
// it with what sd-journal reaches, so that a file that ends early says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rdma_eventd_fleet {

struct JournalHeader {
  uint64_t entries = 0;           // n_entries
  uint64_t head_realtime_us = 0;  // head_entry_realtime: 0 when the file has no entry
  uint64_t tail_realtime_us = 0;  // tail_entry_realtime
};

// The bytes a header needs to be read from: the fields above end at byte 200.
inline constexpr size_t kJournalHeaderBytes = 208;

// The header at the start of `bytes`, or nothing when they are not one: too short, another
// signature than "LPKSHHRH", or a header size (its own field) shorter than the fields above.
std::optional<JournalHeader> parse_journal_header(const unsigned char* bytes, size_t size);

}  // namespace rdma_eventd_fleet
