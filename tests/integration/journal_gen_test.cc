// rdma-journal-gen's entries are the daemon's: the real rdma-eventd on the simulator writes a
// port_err of mlx5_0/1 to the journal sandbox's journald, rdma-journal-gen writes its entry for
// the same event through systemd-journal-remote, and the two, read back with journalctl, have
// the same fields with the same values, but for what must differ between two records of two
// daemons (seq, stream, time, host, and journald's fields of the process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "daemon_process.h"
#include "paths.h"
#include "process.h"
#include "temp_dir.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::CommandResult;
using rdmatest::run_command;

std::string generating_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// The entry with what must differ left out: the journal's own fields (__CURSOR, times), the
// fields journald adds about the process (_PID, _COMM...: the generator's are a packaged
// daemon's), the record's seq, stream, time and host, and the fields that repeat them.
json comparable(json entry) {
  json out = json::object();
  for (auto& [key, value] : entry.items()) {
    if (key.rfind("_", 0) == 0) continue;
    if (key == "RDMA_SEQ" || key == "RDMA_STREAM") continue;
    out[key] = value;
  }
  json record = json::parse(out["RDMA_RECORD"].get<std::string>());
  for (const char* key : {"seq", "stream", "time", "host"}) {
    EXPECT_TRUE(record.contains(key)) << key;
    record.erase(key);
  }
  out["RDMA_RECORD"] = record;
  return out;
}

TEST(JournalGen, ItsPortErrEntryIsTheDaemonsFieldByField) {
  rdmatest::SimFabric sim(rdmatest::topology("two-adapters"));
  DaemonOptions o;
  o.config_json = R"({"journal": {"identifier": "rdma-eventd"}, "health": {"enabled": false}})";
  DaemonProcess daemon(sim, o);
  inject(sim, {"port", "down", "mlx5_0/1"});
  const std::string line = daemon.next_record_line(20s);
  ASSERT_EQ(json::parse(line)["event"], "port_err");
  const auto entries = daemon.journal_entries(1);
  ASSERT_EQ(entries.size(), 1u);
  const json& real = entries[0];
  ASSERT_EQ(real["RDMA_RECORD"], line);

  rdmatest::TempDir dir("rdma-journal-gen");
  const CommandResult written =
      run_command({"sh", "-c",
                   "\"$0\" --entry port_err --host \"$1\" | /lib/systemd/systemd-journal-remote "
                   "--output=\"$2\"/remote-gen.journal -",
                   rdmatest::bin("rdma-journal-gen"), generating_host(), dir.path()});
  ASSERT_EQ(written.exit_code(), 0) << written.err;
  const CommandResult read =
      run_command({"journalctl", "-D", dir.path(), "-o", "json", "--no-pager"});
  ASSERT_EQ(read.exit_code(), 0) << read.err;
  const auto lines = read.out_lines();
  ASSERT_EQ(lines.size(), 1u) << read.out;
  const json generated = json::parse(lines[0]);

  EXPECT_EQ(comparable(generated), comparable(real));
  // What differs is there in both, in the same form.
  for (const char* key : {"RDMA_SEQ", "RDMA_STREAM", "_HOSTNAME", "_BOOT_ID", "_MACHINE_ID",
                          "_TRANSPORT", "_PID", "_UID", "_COMM", "__REALTIME_TIMESTAMP"}) {
    EXPECT_TRUE(real.contains(key)) << key;
    EXPECT_TRUE(generated.contains(key)) << key;
  }
  EXPECT_EQ(generated["_TRANSPORT"], real["_TRANSPORT"]);
  EXPECT_EQ(generated["_HOSTNAME"], generating_host());
  const json record = json::parse(generated["RDMA_RECORD"].get<std::string>());
  EXPECT_EQ(generated["RDMA_SEQ"], std::to_string(record["seq"].get<int>()));
  EXPECT_EQ(generated["RDMA_STREAM"], record["stream"]);
  EXPECT_EQ(record["host"], generating_host());
  EXPECT_EQ(generated["RDMA_STREAM"].get<std::string>().size(), 32u);
}

}  // namespace
}  // namespace rdma_eventd::test
