// A journal that fails never blocks the loop and never costs other sinks a record; a reload's
// new identifier applies from the next record on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

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

std::string identifier_config(const std::string& identifier) {
  return nlohmann::json{{"journal", {{"identifier", identifier}}}}.dump();
}

TEST(JournalIdentifier, AReloadsNewIdentifierNamesTheRecordsAfterIt) {
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim, identifier_config("rdma-before"));
  inject(sim, {"storm", "--count", "3", "--targets", "mlx5_0/1"});
  for (int i = 0; i < 3; ++i)
    daemon.next_record();
  daemon.write_config(identifier_config("rdma-after"));
  daemon.reload();
  daemon.require_log("configuration reloaded");
  inject(sim, {"storm", "--count", "3", "--targets", "mlx5_0/1"});
  for (int i = 0; i < 3; ++i)
    daemon.next_record();
  // A second reload that changes nothing else: the identifier stays the new one.
  daemon.reload();
  daemon.require_log("configuration reloaded");
  inject(sim, {"lid", "mlx5_0/1", "9"});
  daemon.next_record();

  const auto entries = daemon.journal_entries(7);
  ASSERT_EQ(entries.size(), 7u);
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["RDMA_SEQ"], std::to_string(i + 1));
    EXPECT_EQ(entries[i]["SYSLOG_IDENTIFIER"], i < 3 ? "rdma-before" : "rdma-after")
        << "seq " << i + 1;
  }
}

}  // namespace
}  // namespace rdma_eventd::test
