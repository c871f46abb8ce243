// rdma-journal-gen's entries are the daemon's: the real rdma-eventd on the simulator writes a
// port_err of mlx5_0/1 to the journal sandbox's journald, rdma-journal-gen writes its entry for
// the same event through systemd-journal-remote, and the two, read back with journalctl, have
// the same fields with the same values, but for what must differ between two records of two
// daemons (seq, stream, time, host, and journald's fields of the process).
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  // A verdict's since and cause are times and seqs of its own daemon: compared as what they
  // are to the record's own time and seq.
  if (record.contains("since"))
    record["since"] = record["since"] == record["time"] ? "(the record's time)" : "(another time)";
  if (record.contains("cause_seq") && record["cause_seq"] != 0) {
    record["cause_seq"] = record["cause_seq"] == record["seq"].get<uint64_t>() - 1
                              ? "(the record before)"
                              : "(another record)";
  }
  for (const char* key : {"seq", "stream", "time", "host"}) {
    EXPECT_TRUE(record.contains(key)) << key;
    record.erase(key);
  }
  out["RDMA_RECORD"] = record;
  return out;
}

// The generator's entry for ARGS, read back through systemd-journal-remote and journalctl.
json generated_entry(const std::vector<std::string>& args) {
  rdmatest::TempDir dir("rdma-journal-gen");
  std::string quoted;
  for (const auto& a : args)
    quoted += " '" + a + "'";
  const CommandResult written = run_command(
      {"sh", "-c",
       "\"$0\" --host \"$1\"" + quoted +
           " | /lib/systemd/systemd-journal-remote --output=\"$2\"/remote-gen.journal -",
       rdmatest::bin("rdma-journal-gen"), generating_host(), dir.path()});
  EXPECT_EQ(written.exit_code(), 0) << written.err;
  const CommandResult read =
      run_command({"journalctl", "-D", dir.path(), "-o", "json", "--no-pager"});
  EXPECT_EQ(read.exit_code(), 0) << read.err;
  const auto lines = read.out_lines();
  if (lines.size() != 1u) {
    ADD_FAILURE() << "one entry expected: " << read.out;
    return json::object();
  }
  return json::parse(lines[0]);
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

  const json generated = generated_entry({"--entry", "port_err"});
  ASSERT_TRUE(generated.contains("RDMA_RECORD"));

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

// Every kind of entry the generator writes (the fleet scenarios' port_state, port_err,
// port_active, sm_change, device_fatal, app_report and port_health with each verdict they use),
// each against the real daemon's entry for the same event on the simulator, field by field.
// Only what must differ between two daemons' records is left out (as above), and the reporter
// of an app_report (a test process here, a job there): it must be there in both, with the same
// keys.
json without_reporter(json entry) {
  json record = entry["RDMA_RECORD"];
  if (record.contains("reporter")) {
    json keys = json::array();
    for (auto& [key, value] : record["reporter"].items())
      keys.push_back(key);
    record["reporter"] = keys;
  }
  entry["RDMA_RECORD"] = record;
  for (const char* key : {"RDMA_REPORTER_PID", "RDMA_REPORTER_UID", "RDMA_REPORTER_COMM",
                          "RDMA_REPORTER_UNIT", "RDMA_REPORTER_CGROUP", "MESSAGE"}) {
    if (entry.contains(key) && record.contains("reporter")) entry[key] = "(reporter)";
  }
  return entry;
}

TEST(JournalGen, EveryKindOfItsEntriesIsTheDaemonsFieldByField) {
  rdmatest::SimFabric sim(rdmatest::topology("two-adapters"));
  DaemonOptions o;
  // The generator's port_health records carry a 10 s flap window and a 2 s quiet period; it
  // makes a port flapping after its scenario's downs (3 here).
  o.config_json = R"({"journal": {"identifier": "rdma-eventd"},
                      "health": {"enabled": true, "flap_downs": 3, "flap_window_s": 10,
                                 "flap_quiet_s": 2}})";
  DaemonProcess daemon(sim, o);
  // Each change waits for its records (a port brought up and down at once would be queried
  // down by the time its port_active is read).
  std::vector<json> records;
  const auto read_until = [&](const std::string& event, const std::string& health = "") {
    for (;;) {
      json r = json::parse(daemon.next_record_line(20s));
      records.push_back(r);
      if (r["event"] == event && r["device"] == "mlx5_0" &&
          (health.empty() || r["health"] == health))
        return;
    }
  };
  read_until("port_health", "healthy");  // mlx5_0/1's first verdict
  for (int i = 0; i < 3; ++i) {
    inject(sim, {"port", "down", "mlx5_0/1"});
    read_until("port_health", i < 2 ? "down" : "flapping");
    inject(sim, {"port", "up", "mlx5_0/1", "--lid", "7", "--sm-lid", "1"});
    read_until("port_active");
    if (i < 2) read_until("port_health", "healthy");
    if (i == 0) {
      inject(sim, {"sm", "mlx5_0/1", "1"});
      read_until("sm_change");
      inject(sim, {"lid", "mlx5_0/1", "7"});
      read_until("lid_change");
      inject(sim, {"reregister", "mlx5_0/1"});
      read_until("client_reregister");
    }
  }
  const CommandResult report =
      run_command({rdmatest::bin("rdma-eventctl"), "report", "mlx5_0", "qp_fatal", "--object",
                   "4660", "--detail", "job 17 rank 3", "--socket", daemon.socket()});
  ASSERT_EQ(report.exit_code(), 0) << report.err;
  read_until("app_report");
  inject(sim, {"fatal", "mlx5_0"});
  read_until("port_health", "fatal");
  // A device opened again (a replugged adapter): its ports' port_state.
  inject(sim, {"unplug", "mlx5_0"});
  read_until("device_removed");
  inject(sim, {"replug", "mlx5_0"});
  read_until("port_state");
  const auto entries = daemon.journal_entries(records.size());
  ASSERT_GE(entries.size(), records.size());  // and what followed the last one read
  std::map<std::string, int> kinds;
  for (const json& real : entries) {
    const json record = json::parse(real["RDMA_RECORD"].get<std::string>());
    const std::string event = record["event"];
    if (record["seq"] > records.back()["seq"]) break;  // after the last record read
    if (record.value("device", "") != "mlx5_0")
      continue;  // mlx5_1's first verdict: the same as mlx5_0's
    // The device's life (device_removed, device_added, device_recovered): not the generator's.
    if (event.rfind("device_", 0) == 0 && event != "device_fatal") continue;
    std::vector<std::string> args = {"--entry", event};
    if (event == "port_health") {
      const std::string previous =
          record["previous_health"].is_string() ? record["previous_health"] : "";
      args.insert(args.end(),
                  {"--health", record["health"], "--reason", record["reason"], "--previous",
                   previous, "--downs", std::to_string(record["downs_in_window"].get<int>())});
    }
    SCOPED_TRACE(real["RDMA_RECORD"].get<std::string>());
    json generated = generated_entry(args);
    ASSERT_TRUE(generated.contains("RDMA_RECORD"));
    ++kinds[event == "port_health" ? event + "/" + record["health"].get<std::string>() : event];
    EXPECT_EQ(without_reporter(comparable(generated)), without_reporter(comparable(real)));
  }
  const std::map<std::string, int> want = {
      {"port_err", 3},         {"port_active", 3},          {"sm_change", 1},
      {"lid_change", 1},       {"client_reregister", 1},    {"app_report", 1},
      {"device_fatal", 1},     {"port_state", 1},           {"port_health/healthy", 3},
      {"port_health/down", 2}, {"port_health/flapping", 1}, {"port_health/fatal", 1},
      {"port_health/gone", 1}};
  EXPECT_EQ(kinds, want);
}

// An output directory that is missing, or is a file, is said (it once ended by SIGPIPE, exit
// 141, with nothing on stderr).
TEST(JournalGen, SaysWhatIsWrongWithItsOutputDirectory) {
  rdmatest::TempDir dir("rdma-journal-gen");
  const std::string missing = dir.path() + "/missing";
  const CommandResult none = run_command(
      {rdmatest::bin("rdma-journal-gen"), "--hosts", "2", "--records", "10", "--output", missing});
  EXPECT_EQ(none.exit_code(), 1);
  EXPECT_EQ(none.err, "rdma-journal-gen: --output " + missing + ": No such file or directory\n");
  const std::string file = dir.path() + "/file";
  ASSERT_EQ(run_command({"touch", file}).exit_code(), 0);
  const CommandResult not_dir = run_command(
      {rdmatest::bin("rdma-journal-gen"), "--hosts", "2", "--records", "10", "--output", file});
  EXPECT_EQ(not_dir.exit_code(), 1);
  EXPECT_EQ(not_dir.err, "rdma-journal-gen: --output " + file + ": Not a directory\n");
  // And a directory that is there: the two hosts' files, and nothing else left in it.
  const CommandResult made = run_command({rdmatest::bin("rdma-journal-gen"), "--hosts", "2",
                                          "--records", "10", "--output", dir.path()});
  ASSERT_EQ(made.exit_code(), 0) << made.err;
  const CommandResult files = run_command({"ls", "-A", dir.path()});
  EXPECT_EQ(files.out, "file\nremote-node01.journal\nremote-node02.journal\n");
}

}  // namespace
}  // namespace rdma_eventd::test
