// rdma-journal-gen's receiver: each host's entries written through systemd-journal-remote as a
// receiver of journals holds them (tests/harness/journal_gen.cc makes the rdma-eventd entries).
// It mixes in the entries of the host's other units (the kernel, sshd, cron, slurmd, systemd
// and logind: what the uploader sends besides rdma-eventd's), and splits each host's time into
// archives named as journal-remote names the files it rotates, the newest left as the active
// remote-HOST.journal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rdma_journal_gen {

// Other units' entries per rdma-eventd entry when --other-units is not given (the fleet of
// --hosts/--records). A quiet compute node's journal: a monitoring login over ssh a minute (ten
// entries: sshd, PAM, logind, the session's scope: 14,400 a day), a cron job a minute (three:
// 4,320), a timer's service every ten minutes (three: 432), a hundred job steps of slurmd and
// slurmstepd (five each: 500), a few hundred kernel messages: about 20,000 entries a day. The
// benchmark's fleet logs 200 rdma-eventd records a host a day, so 100 of the others for each.
// Busier nodes (slurmd at debug level, jobs that write to syslog, audit) log hundreds of
// thousands a day: a higher ratio.
inline constexpr double kDefaultOtherUnits = 100;

// A host as its journald stamps its entries.
struct HostIdentity {
  std::string name;
  std::string boot_id;
  std::string machine_id;
  int64_t monotonic_offset_us = 0;  // __MONOTONIC_TIMESTAMP = __REALTIME_TIMESTAMP + this
};

// One entry in journal export format (ending with its empty line), and its time.
struct TimedEntry {
  int64_t time_us;
  std::string text;
};

// What a host sends: its rdma-eventd entries in time order (an upload's copies included) and
// how many records they are (copies not counted: the ratio's base).
struct HostEntries {
  HostIdentity id;
  std::vector<TimedEntry> rdma;
  size_t records = 0;
};

struct ReceiverShape {
  size_t archives = 1;     // files per host: the active one and archives - 1 before it
  double other_units = 0;  // other units' entries per rdma-eventd record
  // The time the archives split into equal stretches, one per file, and that the other units'
  // entries fill; entries outside it go to the first or the last file.
  int64_t from_us = 0;
  int64_t to_us = 0;
  uint64_t seed = 1;
  bool sparse = false;  // free each file's zero blocks (the disk it takes)
  unsigned jobs = 1;    // hosts written at once, each by a process with its own journal-remote
};

// The other units' entries a host with `records` rdma-eventd records gets.
size_t other_units_count(const ReceiverShape& shape, size_t records);

// Writes `hosts` hosts' files into `dir` (which must be there): `host(i)` makes host i's
// entries, in the process that writes that host. Returns false, having said why on stderr,
// when journal-remote or a file failed.
bool write_receiver(const std::string& dir, size_t hosts,
                    const std::function<HostEntries(size_t)>& host, const ReceiverShape& shape);

// Frees the blocks of `path` that hold only zeros (FALLOC_FL_PUNCH_HOLE): what it reads stays
// the same byte for byte. Returns 0 or an errno.
int punch_zero_blocks(const std::string& path);

}  // namespace rdma_journal_gen
