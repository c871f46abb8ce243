// The daemon's own log lines keep their priority in the journal when its standard error is
// the journal, as under systemd: `journalctl -p err` shows its errors. Read back from a real
// journald (the sandbox's).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"

namespace rdma_eventd::test {
namespace {

using rdmatest::Process;
using rdmatest::SimFabric;
using rdmatest::topology;

const std::string kIdentifier = "rdma-eventd";
const std::string kReloadFailed = "reload failed, keeping the running configuration: ";
const std::string kRestartOnly =
    "socket: path, mode, group, ring_records and enabled change at restart only; the new limits "
    "apply now";

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// `argv` run as systemd runs a service with StandardError=journal: systemd-cat connects stdout
// and stderr to a journal stream of their own, with syslog prefixes parsed, and
// $JOURNAL_STREAM names that stream ("device:inode"), as systemd sets it.
std::vector<std::string> on_journal_stream(const std::vector<std::string>& argv) {
  const std::string with_stream = "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$@\"";
  std::vector<std::string> wrapped = {"systemd-cat", "-t", kIdentifier, "--level-prefix=true"};
  wrapped.insert(wrapped.end(), {"--", "sh", "-c", with_stream, "sh"});
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

// The entries the process `pid` wrote to its standard output and error, oldest first.
std::vector<nlohmann::json> stream_entries(pid_t pid) {
  return JournalSandbox::instance().entries({"_PID=" + std::to_string(pid), "_TRANSPORT=stdout"});
}

// Waits until one of them says `text` (a prefix of MESSAGE) and returns them all.
std::vector<nlohmann::json> wait_for_entry(Process& daemon, const std::string& text) {
  std::vector<nlohmann::json> entries;
  auto has = [&] {
    entries = stream_entries(daemon.pid());
    for (const auto& e : entries)
      if (starts_with(e.value("MESSAGE", ""), text)) return true;
    return false;
  };
  if (!rdmatest::wait_until(has, 20s)) {
    std::string seen;
    for (const auto& e : entries)
      seen += "\n  " + e.value("PRIORITY", "?") + " " + e.value("MESSAGE", "");
    ADD_FAILURE() << "no journal entry '" << text << "' from pid " << daemon.pid()
                  << "; its entries:" << seen << "\n"
                  << daemon.describe();
  }
  return entries;
}

// The PRIORITY of the entry whose MESSAGE starts with `text`, "" when there is none.
std::string priority_of(const std::vector<nlohmann::json>& entries, const std::string& text) {
  for (const auto& e : entries)
    if (starts_with(e.value("MESSAGE", ""), text)) return e.value("PRIORITY", "none");
  return "";
}

TEST(LogPriority, TheDaemonsErrorsAndWarningsKeepTheirPriorityInTheJournal) {
  JournalSandbox& journal = JournalSandbox::instance();
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-log-priority");
  const std::string config = dir.write("rdma-eventd.json", "{}");
  Process daemon = sim.spawn(on_journal_stream(
      {rdmatest::bin("rdma-eventd"), "-f", "-c", config, "--socket", dir.file("events.sock")}));
  wait_for_entry(daemon, "ready: watching 2 devices");

  // An error: a reload with a broken file.
  dir.write("rdma-eventd.json", "{\"log_level\": ");
  ASSERT_TRUE(daemon.signal(SIGHUP));
  wait_for_entry(daemon, kReloadFailed);
  // A warning: a reload that changes what applies at the next start only.
  dir.write("rdma-eventd.json", R"({"socket": {"ring_records": 16}})");
  ASSERT_TRUE(daemon.signal(SIGHUP));
  const auto entries = wait_for_entry(daemon, "configuration reloaded");

  EXPECT_EQ(priority_of(entries, kReloadFailed), "3");
  EXPECT_EQ(priority_of(entries, kRestartOnly), "4");
  EXPECT_EQ(priority_of(entries, "ready: watching 2 devices"), "6");
  EXPECT_EQ(priority_of(entries, "SIGHUP: reloading " + config), "6");
  EXPECT_EQ(priority_of(entries, "configuration reloaded"), "6");
  for (const auto& e : entries) {
    const std::string message = e.value("MESSAGE", "");
    EXPECT_EQ(e.value("SYSLOG_IDENTIFIER", ""), kIdentifier) << message;
    // The prefix is read by journald, not stored; the level is the priority, not text.
    EXPECT_FALSE(starts_with(message, "<")) << message;
    EXPECT_FALSE(starts_with(message, "error:") || starts_with(message, "warning:") ||
                 starts_with(message, "info:"))
        << message;
  }
  // What operators run: errors and worse.
  const auto errors =
      journal.entries({"-p", "err", "_PID=" + std::to_string(daemon.pid()), "_TRANSPORT=stdout"});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(starts_with(errors[0].value("MESSAGE", ""), kReloadFailed + config))
      << errors[0].dump();

  const rdmatest::ExitStatus end = daemon.stop();
  EXPECT_TRUE(end.success()) << end.describe() << "\n" << daemon.describe();
  EXPECT_EQ(priority_of(wait_for_entry(daemon, "SIGTERM: stopping"), "SIGTERM: stopping"), "6");
}

TEST(LogPriority, AStartupErrorIsAnErrorInTheJournal) {
  // Given a configuration that does not load, the daemon exits 78 and its one message is an
  // error for the journal too.
  JournalSandbox::instance();
  rdmatest::TempDir dir("rdma-log-priority");
  const std::string config = dir.write("rdma-eventd.json", R"({"devices": {"exclude": ["a", 1]}})");
  Process daemon =
      Process::spawn(on_journal_stream({rdmatest::bin("rdma-eventd"), "-f", "-c", config}));
  const rdmatest::ExitStatus end = daemon.require_exit(20s);
  EXPECT_EQ(end.describe(), "exit 78");
  const std::string message =
      "rdma-eventd: " + config + ": devices.exclude[1]: expected a string, got a number";
  const auto entries = wait_for_entry(daemon, message);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("MESSAGE", ""), message);
  EXPECT_EQ(entries[0].value("PRIORITY", ""), "3");
}

TEST(LogPriority, AnInheritedJournalStreamOfAnotherFileLeavesTheLogAsText) {
  // Given $JOURNAL_STREAM naming a stream that is not its stderr (a service's child whose
  // stderr was redirected), the daemon writes its log as text, level first.
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  struct stat st {};
  ASSERT_EQ(fstat(fds[0], &st), 0);
  SimFabric sim(topology("two-adapters"));
  DaemonOptions options;
  options.env["JOURNAL_STREAM"] = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  DaemonProcess daemon(sim, options);
  daemon.write_config("{\"log_level\": ");
  ASSERT_TRUE(daemon.process().signal(SIGHUP));
  daemon.require_log("error: " + kReloadFailed + daemon.config_path());
  EXPECT_TRUE(daemon.logged("info: ready: watching 2 devices"));
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace rdma_eventd::test
