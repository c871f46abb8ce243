// One sd-journal: over one journal file, or over the local journal as journalctl opens it. The
// only part of the fleet module (and of rdma-eventctl) that knows libsystemd.
//
// A journal file is read through sd-journal's index of the entries that match (the entry arrays
// of the matched fields' data objects). When that stops short, sd-journal says nothing: it
// drops a file it cannot go on reading and reports the end of the journal, and a file damaged
// after its header, read that way, ended early with no word. So, at the end of a file, the
// reader checks that sd-journal still has it and reaches the last entry its header names;
// when either fails, it reads on without the index, entry by entry from the file's head as
// `journalctl --file` does (skipping the entries sd-journal cannot read), past the last entry
// it gave, filters the entries itself, and says what it found (damage()).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "entry_stream.h"
#include "journal_header.h"
#include "journal_query.h"
#include "rdma_eventd/internal/unique_fd.h"

struct sd_journal;

namespace rdma_eventd_fleet {

// How far a damaged file was read.
struct FileDamage {
  uint64_t through_index = 0;  // matching entries read through the index before it stopped
  uint64_t readable = 0;       // entries read entry by entry, of any program
  uint64_t in_header = 0;      // entries the header counts (when it can be read; else 0)
  bool place_lost = false;     // the entry where the index stopped was not found again
};

class JournalFile : public EntryStream {
 public:
  // The journal file open as `fd` (read-only; this object closes it, and holds a second
  // descriptor of it while it reads: two descriptors a file), its entries matching
  // `query`; null with the errno in *error when it is not a journal file or a damaged one
  // (EBADMSG, ENODATA, EPROTONOSUPPORT), or the matches cannot be set up.
  static std::unique_ptr<JournalFile> open_fd(rdma_eventd::internal::UniqueFd fd,
                                              const JournalQuery& query, int* error);
  // This host's journal (system and user, sd_journal_open's SD_JOURNAL_LOCAL_ONLY).
  static std::unique_ptr<JournalFile> open_local(const JournalQuery& query, int* error);
  ~JournalFile() override;
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;

  // The next entry within the query's window, from its --since on.
  int next(JournalEntry& e) override;
  // The bytes of the files it has open (sd_journal_get_usage).
  uint64_t usage() const;
  uint64_t entries_read() const { return entries_read_; }
  // Set when a file turned out damaged, once next() has said there is no more.
  const std::optional<FileDamage>& damage() const { return damage_; }

 private:
  // Which entry was given last: the one to find again when reading on without the index.
  struct Place {
    uint64_t realtime = 0;
    uint64_t monotonic = 0;
    unsigned char boot[16] = {};  // the boot's ID, whose monotonic clock that is
    bool operator==(const Place& o) const;
  };
  enum class Mode { kIndex, kEntryByEntry, kDone };

  JournalFile(sd_journal* j, const JournalQuery& q, rdma_eventd::internal::UniqueFd fd);
  static std::unique_ptr<JournalFile> set_up(sd_journal* j, const JournalQuery& query,
                                             rdma_eventd::internal::UniqueFd fd, int* error);
  int next_indexed(JournalEntry& e);
  int next_entry_by_entry(JournalEntry& e);
  bool whole();        // sd-journal has the file still and reaches its header's last entry
  bool read_on();      // reading on without the index: false when it cannot
  void end_damaged();  // damage_, from what reading on found
  bool matches(JournalEntry& e);  // the query's identifier, hosts and events (entry by entry)
  void fill(int64_t realtime, JournalEntry& e);
  Place place(uint64_t realtime) const;  // the current entry's, whose time is `realtime`

  sd_journal* journal_;
  JournalQuery query_;
  rdma_eventd::internal::UniqueFd fd_;  // a file's (none for the local journal)
  Mode mode_ = Mode::kIndex;
  bool started_ = false;
  uint64_t entries_read_ = 0;
  Place last_;
  bool skipping_ = false;  // entry by entry: before the last entry the index gave
  uint64_t walked_ = 0;    // entry by entry: entries read, of any program
  uint64_t through_index_ = 0;
  std::optional<FileDamage> damage_;
};

// The header of the journal file open as `fd`, when it has one (journal_header.h).
std::optional<JournalHeader> read_journal_header(int fd);

}  // namespace rdma_eventd_fleet
