#include "journal_sandbox.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "namespaces.h"
#include "notify_receiver.h"

namespace rdma_eventd::test {
namespace {

using namespace std::chrono_literals;
using rdmatest::HarnessError;

void must_mount(const std::string& src, const std::string& target, const char* type,
                unsigned long flags, const char* data) {
  if (mount(src.empty() ? nullptr : src.c_str(), target.c_str(), type, flags, data) != 0) {
    throw HarnessError("journal sandbox: mount " + target + ": " + std::strerror(errno));
  }
}

std::string must_run(const std::vector<std::string>& argv) {
  rdmatest::CommandResult r = rdmatest::run_command(argv, {}, 60s);
  if (!r.status.success()) {
    throw HarnessError(argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " failed (" +
                       r.status.describe() + "): " + r.err);
  }
  return r.out;
}

// Function-local: set_storage may run during another file's static initialization.
JournalStorage& storage() {
  static JournalStorage s;
  return s;
}
bool& started() {
  static bool s = false;
  return s;
}

}  // namespace

JournalSandbox& JournalSandbox::instance() {
  static JournalSandbox sandbox;
  return sandbox;
}

void JournalSandbox::set_storage(const JournalStorage& wanted) {
  if (started()) throw HarnessError("journal sandbox: storage set after it started");
  storage() = wanted;
}

JournalSandbox::JournalSandbox() {
  if (geteuid() != 0) {
    throw HarnessError(
        "journal sandbox: needs root (a private mount namespace and a journald of "
        "its own); run the tests as root");
  }
  const std::string conf = scratch_.write(
      "journald.conf",
      "[Journal]\nStorage=volatile\nReadKMsg=no\nRateLimitBurst=0\nRateLimitIntervalSec=0\n"
      "ForwardToSyslog=no\nForwardToWall=no\nRuntimeMaxUse=" +
          storage().max_use + "\nRuntimeKeepFree=0\n");
  started() = true;
  // A mount namespace of its own, a tmpfs on /run: the host's journal socket, /run/log and
  // everything else there are hidden.
  rdmatest::make_run_private();
  must_mount(conf, "/etc/systemd/journald.conf", nullptr, MS_BIND, nullptr);
  if (storage().on_disk) {
    // /run/log is where journald keeps a volatile journal.
    const std::string dir = scratch_.file("log");
    mkdir(dir.c_str(), 0755);
    mkdir("/run/log", 0755);
    must_mount(dir, "/run/log", nullptr, MS_BIND, nullptr);
  }
  start_journald();
}

JournalSandbox::~JournalSandbox() {
  stop_journald();
}

void JournalSandbox::start_journald() {
  if (journald_) return;
  // Up once it says READY=1, as it tells systemd: its sockets are open then. (After a restart
  // the old socket file is still there, so the file alone proves nothing.)
  rdmatest::NotifyReceiver notify;
  journald_ = std::make_unique<rdmatest::Process>(
      rdmatest::Process::spawn({"/lib/systemd/systemd-journald"}, notify.spawn_options()));
  try {
    notify.require([](const rdmatest::Notification& m) { return m.has("READY", "1"); }, 20s,
                   "READY=1 from journald");
  } catch (const HarnessError& e) {
    throw HarnessError(std::string("journal sandbox: journald did not come up: ") + e.what() +
                       "\n" + journald_->describe());
  }
}

void JournalSandbox::stop_journald() {
  if (!journald_) return;
  journald_->stop();
  journald_.reset();
}

void JournalSandbox::freeze_journald(bool frozen) {
  if (!journald_) throw HarnessError("journal sandbox: journald is not running");
  journald_->signal(frozen ? SIGSTOP : SIGCONT);
}

std::string JournalSandbox::journalctl(const std::vector<std::string>& args) {
  must_run({"journalctl", "--sync"});
  std::vector<std::string> argv = {"journalctl", "-D", "/run/log/journal", "--no-pager"};
  argv.insert(argv.end(), args.begin(), args.end());
  return must_run(argv);
}

std::vector<std::string> JournalSandbox::follow(const std::vector<std::string>& args, size_t count,
                                                rdmatest::Duration timeout) {
  const auto deadline = rdmatest::Clock::now() + timeout;
  std::vector<std::string> argv = {"journalctl", "-D",       "/run/log/journal",
                                   "--no-pager", "--follow", "--no-tail"};
  argv.insert(argv.end(), args.begin(), args.end());
  rdmatest::Process journalctl = rdmatest::Process::spawn(argv);
  std::vector<std::string> lines;
  lines.reserve(count);
  while (lines.size() < count) {
    auto line = journalctl.next_line(deadline - rdmatest::Clock::now());
    if (!line) {
      journalctl.stop();
      throw HarnessError("journalctl --follow: " + std::to_string(lines.size()) + " of " +
                         std::to_string(count) + " entries in time" +
                         (lines.empty() ? "" : "; the last: " + lines.back()) + "\n" +
                         journalctl.stderr_text());
    }
    lines.push_back(std::move(*line));
  }
  journalctl.stop();
  return lines;
}

std::vector<nlohmann::json> JournalSandbox::entries(const std::vector<std::string>& matches) {
  must_run({"journalctl", "--sync"});
  std::vector<std::string> argv = {"journalctl", "-D", "/run/log/journal",
                                   "--no-pager", "-o", "json"};
  argv.insert(argv.end(), matches.begin(), matches.end());
  rdmatest::CommandResult r = rdmatest::run_command(argv, {}, 60s);
  // journalctl exits 1 with "-- No entries --" when nothing matches yet.
  if (!r.status.success() && r.out.find('{') != std::string::npos) {
    throw HarnessError("journalctl failed: " + r.err);
  }
  std::vector<nlohmann::json> result;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '{') result.push_back(nlohmann::json::parse(line));
  }
  return result;
}

void JournalSandbox::install_catalog(const std::string& catalog_file) {
  const std::string dir = scratch_.file("catalog");
  const std::string db = scratch_.file("catalog-db");
  mkdir(dir.c_str(), 0755);
  mkdir(db.c_str(), 0755);
  must_run({"cp", catalog_file, dir + "/"});
  must_mount(dir, "/usr/lib/systemd/catalog", nullptr, MS_BIND, nullptr);
  must_mount(db, "/var/lib/systemd/catalog", nullptr, MS_BIND, nullptr);
  must_run({"journalctl", "--update-catalog"});
}

}  // namespace rdma_eventd::test
