// A journal that fails never blocks the loop and never costs other sinks a record.
#include <gtest/gtest.h>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using rdmatest::SimFabric;
using rdmatest::topology;

TEST(JournalDown, RecordsStillReachOtherSinksAndTheJournalResumes) {
  JournalSandbox& journal = JournalSandbox::instance();
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  inject(sim, {"lid", "mlx5_0/1", "8"});
  EXPECT_EQ(daemon.next_record().seq, 1u);
  daemon.journal_entries(1);

  journal.stop_journald();
  // One at a time: two events read in one batch share one query, so both would say LID 10.
  inject(sim, {"lid", "mlx5_0/1", "9"});
  EXPECT_EQ(daemon.next_record().port_info->lid, 9u);
  inject(sim, {"lid", "mlx5_0/1", "10"});
  EXPECT_EQ(daemon.next_record().port_info->lid, 10u);
  daemon.require_log("journal: cannot write records");

  journal.start_journald();
  inject(sim, {"lid", "mlx5_0/1", "11"});
  EXPECT_EQ(daemon.next_record().port_info->lid, 11u);
  daemon.require_log("journal: writing records again (2 failed so far)");
  // The records written while journald was down are not in the journal; the others are.
  const auto entries = daemon.journal_entries(2);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["RDMA_SEQ"], "1");
  EXPECT_EQ(entries[1]["RDMA_SEQ"], "4");
  int failure_lines = 0;
  for (const auto& l : daemon.process().stderr_lines()) {
    if (l.find("cannot write records") != std::string::npos) ++failure_lines;
  }
  EXPECT_EQ(failure_lines, 1) << "a failing journal is logged once, not per record";
}

}  // namespace
}  // namespace rdma_eventd::test
