// rdma-journal-gen's entries are the daemon's: the real rdma-eventd on the simulator writes a
// port_err of mlx5_0/1 to the journal sandbox's journald, rdma-journal-gen writes its entry for
// the same event through systemd-journal-remote, and the two, read back with journalctl, have
// the same fields with the same values, but for what must differ between two records of two
// daemons (seq, stream, time, host, and journald's fields of the process).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
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

// A receiver's journal: other units' entries mixed in, each host's time split into archives.

// What a journal file's header says (systemd's struct Header, little-endian).
struct FileHeader {
  unsigned state = 0;
  std::string seqnum_id;  // hex
  uint64_t entries = 0, head_seqnum = 0, head_realtime = 0, tail_realtime = 0;
};

FileHeader read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char h[208] = {};
  in.read(reinterpret_cast<char*>(h), sizeof h);
  EXPECT_EQ(in.gcount(), 208) << path;
  const auto le64 = [&h](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
      v = (v << 8) | h[at + i];
    return v;
  };
  FileHeader f{.state = h[16],
               .entries = le64(152),
               .head_seqnum = le64(168),
               .head_realtime = le64(184),
               .tail_realtime = le64(192)};
  char hex[3];
  for (size_t i = 72; i < 88; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", h[i]);
    f.seqnum_id += hex;
  }
  return f;
}

CommandResult generate(const std::string& dir, const std::vector<std::string>& shape) {
  std::vector<std::string> argv = {rdmatest::bin("rdma-journal-gen"),
                                   "--hosts",
                                   "3",
                                   "--records",
                                   "300",
                                   "--days",
                                   "2",
                                   "--seed",
                                   "5",
                                   "--output",
                                   dir};
  argv.insert(argv.end(), shape.begin(), shape.end());
  return run_command(argv, {}, 120s);
}

// The records the generator says it wrote ("N hosts, M records...").
int generated_records(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("^3 hosts, ([0-9]+) records"))) {
    ADD_FAILURE() << out;
    return 0;
  }
  return std::stoi(m[1]);
}

CommandResult history(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {rdmatest::bin("rdma-eventctl"), "history", "-D", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, {}, 120s);
}

// A host's files, oldest first (by the time of their first entry); the active one last.
struct HostFiles {
  std::vector<std::string> archives;
  std::string active;
};

std::map<std::string, HostFiles> files_by_host(const std::string& dir) {
  static const std::regex archive(
      "remote-(node[0-9]+)@[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{16}\\.journal");
  static const std::regex active("remote-(node[0-9]+)\\.journal");
  std::map<std::string, HostFiles> hosts;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    std::smatch m;
    if (std::regex_match(name, m, archive)) {
      hosts[m[1]].archives.push_back(e.path());
    } else if (std::regex_match(name, m, active)) {
      hosts[m[1]].active = e.path();
    } else {
      ADD_FAILURE() << "not a journal-remote name: " << name;
    }
  }
  for (auto& [host, files] : hosts) {
    std::sort(files.archives.begin(), files.archives.end(),
              [](const std::string& a, const std::string& b) {
                return read_header(a).head_realtime < read_header(b).head_realtime;
              });
  }
  return hosts;
}

TEST(JournalGen, WritesArchivesAsAReceiverRotatesThem) {
  rdmatest::TempDir dir("rdma-journal-gen");
  const CommandResult gen =
      generate(dir.path(), {"--other-units", "20", "--archives", "4", "--jobs", "2"});
  ASSERT_EQ(gen.exit_code(), 0) << gen.err;
  const int records = generated_records(gen.out);
  EXPECT_EQ(gen.out, "3 hosts, " + std::to_string(records) + " records, " +
                         std::to_string(20 * records) +
                         " entries of other units, 4 files a host at most\n");
  const auto hosts = files_by_host(dir.path());
  ASSERT_EQ(hosts.size(), 3u);
  uint64_t entries = 0;
  std::map<std::string, int> identifiers;
  for (const auto& [host, files] : hosts) {
    SCOPED_TRACE(host);
    ASSERT_EQ(files.archives.size(), 3u);
    ASSERT_FALSE(files.active.empty());
    std::vector<std::string> all = files.archives;
    all.push_back(files.active);
    uint64_t previous_tail = 0;
    for (const std::string& path : all) {
      SCOPED_TRACE(path);
      const FileHeader h = read_header(path);
      EXPECT_GT(h.entries, 0u);
      EXPECT_GT(h.head_realtime, previous_tail);  // each file after the one before
      EXPECT_LE(h.head_realtime, h.tail_realtime);
      previous_tail = h.tail_realtime;
      if (path != files.active) {
        // The name is the header's: sequence number id, first seqnum, first entry's time.
        char name[128];
        std::snprintf(name, sizeof name, "/remote-%s@%s-%016" PRIx64 "-%016" PRIx64 ".journal",
                      host.c_str(), h.seqnum_id.c_str(), h.head_seqnum, h.head_realtime);
        EXPECT_EQ(path, dir.path() + name);
        EXPECT_EQ(h.state, 2u);  // STATE_ARCHIVED
      } else {
        EXPECT_EQ(h.state, 0u);  // STATE_OFFLINE: journal-remote closed it
      }
      // journalctl reads every entry the header counts, each of this host.
      const CommandResult read =
          run_command({"journalctl", "--file", path, "-o", "json", "--no-pager"}, {}, 60s);
      ASSERT_EQ(read.exit_code(), 0) << read.err;
      const auto lines = read.out_lines();
      EXPECT_EQ(lines.size(), h.entries);
      entries += lines.size();
      for (const std::string& line : lines) {
        const json e = json::parse(line);
        EXPECT_EQ(e["_HOSTNAME"], host);
        const std::string id = e["SYSLOG_IDENTIFIER"];
        ++identifiers[id];
        // Kernel messages come from no process and no unit; every other entry has both.
        EXPECT_EQ(e["_TRANSPORT"] == "kernel", id == "kernel") << line;
        EXPECT_EQ(e.contains("_PID"), id != "kernel") << line;
        EXPECT_EQ(e.contains("_SYSTEMD_UNIT"), id != "kernel") << line;
        for (const char* key : {"MESSAGE", "PRIORITY", "_BOOT_ID", "_MACHINE_ID"})
          EXPECT_TRUE(e.contains(key)) << key << ": " << line;
      }
    }
  }
  EXPECT_EQ(entries, 21u * records);
  EXPECT_EQ(identifiers["rdma-eventd"], records);
  for (const char* id : {"kernel", "sshd", "systemd", "systemd-logind", "CRON", "slurmd"})
    EXPECT_GT(identifiers[id], 0) << id;
}

// rdma-eventctl reads rdma-eventd's entries only: the same records, however many other units'
// entries and archives are around them; and --jobs changes nothing of them.
TEST(JournalGen, OtherUnitsAndArchivesLeaveTheRecordsAsTheyAre) {
  rdmatest::TempDir plain("rdma-journal-gen"), receiver("rdma-journal-gen");
  const CommandResult alone = generate(plain.path(), {"--other-units", "0", "--jobs", "1"});
  ASSERT_EQ(alone.exit_code(), 0) << alone.err;
  const CommandResult gen =
      generate(receiver.path(), {"--other-units", "20", "--archives", "4", "--jobs", "2"});
  ASSERT_EQ(gen.exit_code(), 0) << gen.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--json"}, std::vector<std::string>{"--incidents", "--json"}}) {
    const CommandResult want = history(plain.path(), args);
    const CommandResult got = history(receiver.path(), args);
    ASSERT_EQ(want.exit_code(), 0) << want.err;
    EXPECT_EQ(got.exit_code(), 0) << got.err;
    EXPECT_EQ(got.err, "");
    EXPECT_FALSE(want.out.empty());
    EXPECT_EQ(got.out, want.out);
  }
  EXPECT_EQ(history(plain.path(), {"--json"}).out_lines().size(),
            static_cast<size_t>(generated_records(alone.out)));
}

// --since and --until leave the archives outside them unopened: each host's oldest archive and
// its active file are cut to their header (opened, each is named and the exit status is 74),
// and a window between them reads the same records as over the whole files, saying nothing.
// A time as --since and --until take it: @SECONDS.MICROSECONDS.
std::string at(uint64_t us) {
  char text[48];
  std::snprintf(text, sizeof text, "@%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
  return text;
}

// Three hosts' receiver, four files each (file 0 to 2 the archives, 3 the active file), and a
// window in it: from just after the latest first entry of the hosts' file `from` to just before
// the earliest first entry of their file `to`, with what it reads (--json) before any change.
struct Receiver {
  rdmatest::TempDir dir{"rdma-journal-gen"};
  std::map<std::string, HostFiles> hosts;
  std::vector<std::string> window;
  std::string records;

  const std::string& file(const HostFiles& h, size_t i) { return i < 3 ? h.archives[i] : h.active; }
};

void write_receiver(Receiver& r, size_t from, size_t to) {
  const CommandResult gen =
      generate(r.dir.path(), {"--other-units", "5", "--archives", "4", "--jobs", "2"});
  ASSERT_EQ(gen.exit_code(), 0) << gen.err;
  r.hosts = files_by_host(r.dir.path());
  ASSERT_EQ(r.hosts.size(), 3u);
  uint64_t since = 0, until = UINT64_MAX;
  for (const auto& [host, files] : r.hosts) {
    ASSERT_EQ(files.archives.size(), 3u) << host;
    since = std::max(since, read_header(r.file(files, from)).head_realtime + 1);
    until = std::min(until, read_header(r.file(files, to)).head_realtime - 1);
  }
  ASSERT_LT(since, until);
  r.window = {"--json", "--since", at(since), "--until", at(until)};
  const CommandResult want = history(r.dir.path(), r.window);
  ASSERT_EQ(want.exit_code(), 0) << want.err;
  ASSERT_FALSE(want.out.empty());
  r.records = want.out;
}

// Read whole, each of `changed` is named; within the window, nothing is said and the records
// are those before the change.
void expect_left_alone(Receiver& r, const std::vector<std::string>& changed,
                       const std::string& said) {
  const CommandResult whole = history(r.dir.path(), {"--json"});
  EXPECT_EQ(whole.exit_code(), 74);
  for (const std::string& path : changed)
    EXPECT_NE(whole.err.find(path + ": " + said), std::string::npos) << whole.err;
  const CommandResult got = history(r.dir.path(), r.window);
  EXPECT_EQ(got.exit_code(), 0) << got.err;
  EXPECT_EQ(got.err, "");
  EXPECT_EQ(got.out, r.records);
}

TEST(JournalGen, SinceAndUntilSkipTheArchivesOutsideThem) {
  // Each host's oldest archive and its active file cut to their header: read, each is named
  // (the check can fail); outside the window, none of them is read.
  Receiver r;
  ASSERT_NO_FATAL_FAILURE(write_receiver(r, 1, 3));
  std::vector<std::string> cut;
  for (const auto& [host, files] : r.hosts) {
    cut.push_back(files.archives[0]);
    cut.push_back(files.active);
  }
  for (const std::string& path : cut) {
    const CommandResult truncated = run_command({"truncate", "-s", "208", path});
    ASSERT_EQ(truncated.exit_code(), 0) << truncated.err;
  }
  expect_left_alone(r, cut, "");
}

TEST(JournalGen, ArchivesThatTheirNamesPutOutsideTheWindowAreNotEvenOpened) {
  // An archive's name holds its first entry's time; the next archive's first entry ends it. Each
  // host's oldest archive, which the next one's name puts before --since, and its newest, whose
  // own name puts it after --until, become FIFOs: looked at, each would be named ("not a regular
  // file"); left alone, the window reads as before.
  Receiver r;
  ASSERT_NO_FATAL_FAILURE(write_receiver(r, 1, 2));
  std::vector<std::string> fifos;
  for (const auto& [host, files] : r.hosts) {
    for (const std::string& path : {files.archives[0], files.archives[2]}) {
      ASSERT_EQ(::unlink(path.c_str()), 0) << path;
      ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
      fifos.push_back(path);
    }
  }
  expect_left_alone(r, fifos, "cannot open: not a regular file");
}

}  // namespace
}  // namespace rdma_eventd::test
