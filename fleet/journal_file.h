// One sd-journal: over one journal file, or over the local journal as journalctl opens it. The
// only part of the fleet module (and of rdma-eventctl) that knows libsystemd.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "entry_stream.h"
#include "journal_query.h"

struct sd_journal;

namespace rdma_eventd_fleet {

class JournalFile : public EntryStream {
 public:
  // The file at `path`, its entries matching `query`; null with -errno in *error when it cannot
  // be opened (a file that is not a journal file, or a damaged one: EBADMSG, ENODATA,
  // EPROTONOSUPPORT), or the matches cannot be set up.
  static std::unique_ptr<JournalFile> open_file(const std::string& path, const JournalQuery& query,
                                                int* error);
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

 private:
  // What next() needs of the query.
  struct Window {
    std::optional<int64_t> since_us;
    std::optional<int64_t> until_us;
    bool whole_records;
  };
  JournalFile(sd_journal* j, const JournalQuery& q)
      : journal_(j), window_{q.since_us, q.until_us, q.whole_records} {}
  static std::unique_ptr<JournalFile> set_up(sd_journal* j, const JournalQuery& query, int* error);

  sd_journal* journal_;
  Window window_;
  bool started_ = false;
  uint64_t entries_read_ = 0;
};

}  // namespace rdma_eventd_fleet
