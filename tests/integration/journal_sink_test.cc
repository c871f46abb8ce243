// The journal writer (daemon/systemd/journal_sink.h) against the sandbox's real journald,
// without the rest of the daemon: an entry too large for one datagram of the writer's socket
// reaches the journal whole through sd_journal_sendv, its fields read back from the datagram,
// between the entries around it, in order.
#include "systemd/journal_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "journal_sandbox.h"
#include "rdma_eventd/record.h"
#include "schema/record_json.h"
#include "schema/record_text.h"

namespace rdma_eventd::test {
namespace {

using daemon::JournalSink;

// A gid_change with `gids` entries added: a long MESSAGE and a long JSON line.
Record gid_change(const std::string& stream, uint64_t seq, size_t gids) {
  const PortInfo p{.port = 1, .link_layer = LinkLayer::kEthernet, .state = PortState::kActive};
  Record r{.seq = seq,
           .stream = stream,
           .host = "h",
           .event = EventKind::kGidChange,
           .event_type = 18,
           .device = "mlx5_0",
           .node_guid = "248a:0703:00a1:b2c0",
           .port = 1,
           .port_info = p,
           .previous = p};
  for (size_t i = 0; i < gids; ++i) {
    r.gids_added.push_back(
        {static_cast<uint32_t>(i),
         "::ffff:10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256), GidType::kRoceV2,
         "ens1f0"});
  }
  return r;
}

TEST(JournalSink, AnEntryTooLargeForADatagramReachesTheJournalWholeAndInOrder) {
  JournalSandbox& journal = JournalSandbox::instance();
  const std::string stream = "sinktest" + std::to_string(::getpid());
  const std::vector<Record> records = {gid_change(stream, 1, 1), gid_change(stream, 2, 400),
                                       gid_change(stream, 3, 1)};
  std::vector<std::string> lines;
  for (const Record& r : records)
    lines.push_back(to_json(r) + "\n");
  ASSERT_GT(lines[1].size() + describe(records[1]).size(), 24u * 1024)
      << "larger than one datagram on the writer's socket (16 KiB of send buffer)";

  JournalSink sink("rdma-sink-test", 16);
  for (size_t i = 0; i < records.size(); ++i)
    sink.publish(records[i], lines[i]);
  sink.flush();
  journal.follow({"-o", "cat", "RDMA_STREAM=" + stream}, records.size(), std::chrono::seconds(20));

  // --all: journalctl's JSON leaves fields over 4 KiB out otherwise.
  std::istringstream out(journal.journalctl({"--all", "-o", "json", "RDMA_STREAM=" + stream}));
  std::vector<nlohmann::json> entries;
  for (std::string line; std::getline(out, line);) {
    if (!line.empty() && line[0] == '{') entries.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(entries.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(entries[i]["RDMA_SEQ"], std::to_string(i + 1));
    EXPECT_EQ(entries[i]["SYSLOG_IDENTIFIER"], "rdma-sink-test");
    EXPECT_EQ(entries[i]["MESSAGE"], describe(records[i])) << "seq " << i + 1;
    EXPECT_EQ(entries[i]["RDMA_RECORD"].get<std::string>() + "\n", lines[i]) << "seq " << i + 1;
  }
  const JournalSink::Stats stats = sink.stats();
  EXPECT_EQ(stats.written, 3u);
  EXPECT_EQ(stats.failed, 0u);
}

}  // namespace
}  // namespace rdma_eventd::test
