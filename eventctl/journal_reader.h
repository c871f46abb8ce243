// Reading rdma-eventd's journal entries back with sd-journal: the only part of rdma-eventctl
// that knows libsystemd.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rdma_eventctl {

// sysexits.h values for a journal that cannot be read.
inline constexpr int kExitNoInput = 66;  // EX_NOINPUT: no journal files where we looked
inline constexpr int kExitNoPerm = 77;   // EX_NOPERM: journal files there, none readable

// Which entries to read.
struct JournalQuery {
  std::string directory;            // empty: the local journal (this host's, system and user)
  std::string identifier;           // SYSLOG_IDENTIFIER of the daemon's entries
  std::vector<std::string> hosts;   // _HOSTNAME: any of them; empty: every host
  std::optional<int64_t> since_us;  // realtime, microseconds since the epoch; inclusive
  std::optional<int64_t> until_us;  // inclusive
  std::vector<std::string> events;  // RDMA_EVENT: any of them; empty: every entry
  // Whether to read RDMA_RECORD and MESSAGE (the largest fields): a reader of the RDMA_* fields
  // alone reads faster without them.
  bool whole_records = true;
  // A directory's files read in groups of at most this many, each group by its own sd-journal,
  // merged here by time: sd-journal looks at every file it has open for each entry, which a
  // receiver's directory of a thousand hosts' files makes slow. 0: one sd-journal for all.
  size_t files_per_reader = 0;
};

// One of the daemon's entries: the fields rdma-eventctl uses (empty when the entry has none).
struct JournalEntry {
  int64_t realtime_us = 0;
  std::string hostname;  // _HOSTNAME
  std::string record;    // RDMA_RECORD: the record's JSON line, exactly as the daemon sent it
  std::string event;     // RDMA_EVENT
  std::string device;    // RDMA_DEVICE
  std::string port;      // RDMA_PORT
  std::string health;    // RDMA_HEALTH (port_health records)
  std::string stream;    // RDMA_STREAM
  uint64_t seq = 0;      // RDMA_SEQ; 0 when the entry has none
  std::string message;   // MESSAGE
};

// Why a journal cannot be read; `exit_code` is one of the values above.
struct JournalError {
  std::string message;
  int exit_code = kExitNoInput;
};

class JournalReader {
 public:
  // Opens the journal and sets up the matches; nullopt and `*error` when there is nothing this
  // user may read: no journal files at all, or files this user may not open.
  static std::unique_ptr<JournalReader> open(const JournalQuery& query, JournalError* error);
  ~JournalReader();
  JournalReader(const JournalReader&) = delete;
  JournalReader& operator=(const JournalReader&) = delete;

  // Calls `each` for every matching entry in time order, oldest first. Returns false, with
  // `*error`, when reading fails midway.
  bool for_each(const std::function<void(const JournalEntry&)>& each, JournalError* error);

 private:
  struct Handle;
  JournalReader(std::vector<std::unique_ptr<Handle>> handles, JournalQuery query);
  bool read_one(Handle& handle, const std::function<void(const JournalEntry&)>& each,
                JournalError* error);
  bool read_merged(const std::function<void(const JournalEntry&)>& each, JournalError* error);
  std::vector<std::unique_ptr<Handle>> handles_;
  JournalQuery query_;
};

}  // namespace rdma_eventctl
