// What the fleet's journal reader is asked for, what it gives, and how it fails.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rdma_eventd_fleet {

// sysexits.h values for a journal that cannot be read, as rdma-eventctl history exits.
inline constexpr int kExitNoInput = 66;     // EX_NOINPUT: no journal files where we looked
inline constexpr int kExitIncomplete = 74;  // EX_IOERR: some files could not be read (named)
// EX_TEMPFAIL: files deleted after the directory was listed (a vacuum), named; run again.
inline constexpr int kExitChanged = 75;
inline constexpr int kExitNoPerm = 77;  // EX_NOPERM: journal files there, none readable

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
};

// One of the daemon's entries: the fields rdma-eventctl uses (empty when the entry has none).
// The strings are the journal's bytes, whatever an uploading host sent.
struct JournalEntry {
  int64_t realtime_us = 0;
  std::string hostname;  // _HOSTNAME
  std::string record;    // RDMA_RECORD: the record's JSON line, exactly as the daemon sent it
  std::string event;     // RDMA_EVENT
  std::string device;    // RDMA_DEVICE
  std::string port;      // RDMA_PORT
  std::string health;    // RDMA_HEALTH (port_health records)
  // RDMA_LINK_CHANGE (link_quality records), RDMA_DEVLINK_CHANGE (devlink_health records)
  std::string link_change;
  std::string stream;   // RDMA_STREAM
  uint64_t seq = 0;     // RDMA_SEQ; 0 when the entry has none
  std::string message;  // MESSAGE
};

// Why the journal cannot be read at all; `exit_code` is one of the values above.
struct JournalError {
  std::string message;
  int exit_code = kExitNoInput;
};

// A journal file that could not be read, or not to its end, or that was gone when its turn
// came: named, the others read.
struct FileProblem {
  enum class Kind {
    kLeftOut,  // not read: "cannot open: Permission denied"
    kDamaged,  // read in part, or entry by entry past its damage
    kDeleted,  // deleted after the directory was listed (a vacuum): nothing to read
  };
  std::string path;
  std::string message;  // what happened, then what became of its entries
  int error = 0;        // the errno, when there is one
  Kind kind = Kind::kLeftOut;
};

}  // namespace rdma_eventd_fleet
