// The entries of a compute node's other units, as its journald stores them, for
// rdma-journal-gen's receiver (journal_gen_receiver.h): an ssh login (sshd, PAM, logind and the
// session's scope), a cron job, a job step of slurmd and slurmstepd, a timer's service started
// by systemd, a kernel message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "journal_gen_receiver.h"

namespace rdma_journal_gen {

// One entry of another unit: its time, the burst of entries it belongs to (a login, a job...)
// by its rank in the host's time, the burst's kind and the entry's step in it.
struct OtherEntry {
  int64_t time_us;
  uint32_t burst;
  uint8_t kind;
  uint8_t step;
};

// `count` entries of host `host` within [from_us, to_us), in time order; the same for the same
// seed, host and count.
std::vector<OtherEntry> plan_other_units(size_t host, uint64_t seed, size_t count, int64_t from_us,
                                         int64_t to_us);

// The entry in journal export format, ending with its empty line.
std::string other_unit_entry(const OtherEntry& e, const HostIdentity& id, size_t host,
                             uint64_t seed);

}  // namespace rdma_journal_gen
