// rdma-eventd run for real on a simulated fabric, for every test suite that needs the daemon.
//
//   rdmatest::SimFabric sim(rdmatest::topology("two-adapters"));
//   rdmatest::DaemonProcess d(sim, {.config_json = R"({"socket": {"ring_records": 16}})"});
//   inject(sim, {"port", "down", "mlx5_0/1"});
//   rdmatest::LineClient c(d.socket());
//
// The daemon runs in the foreground as systemd runs it, with NOTIFY_SOCKET pointing at a
// receiver of the test (notify()): the constructor returns once the daemon says READY=1 (its
// devices are open and its socket listens), and reload() once a reload is over (RELOADING=1,
// then READY=1). Its configuration file and socket live in a private directory. When the
// object goes away the daemon is stopped with SIGTERM and must exit 0: in a sanitizer build
// that also means no leak and no sanitizer report.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "notify_receiver.h"
#include "process.h"
#include "sim_fabric.h"
#include "temp_dir.h"

namespace rdmatest {

struct DaemonOptions {
  std::string config_json = "{}";  // written to DIR/rdma-eventd.json, passed with -c
  // Port health, on by default in the daemon, is off unless a test asks for it (here or with
  // "health": {"enabled": true} in config_json, which wins): each port's first verdict at start
  // would add records to every sequence the other tests assert.
  bool health = false;
  std::vector<std::string> extra_args;
  bool wait_ready = true;  // false: for a daemon expected to fail at startup
  // --print-records: the test must then read the daemon's stdout (next_record_line), or a
  // storm fills the pipe and the daemon waits for it.
  bool print_records = false;
  std::string socket;                      // --socket; empty: DIR/events.sock
  std::map<std::string, std::string> env;  // more environment for the daemon
  // Records to the journal: the test must have set up a journal of its own first (the
  // integration tests' JournalSandbox). Otherwise --no-journal.
  bool journal = false;
};

class DaemonProcess {
 public:
  DaemonProcess(const SimFabric& sim, const DaemonOptions& options = {});
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  Process& process() { return *proc_; }
  const std::string& dir() const { return dir_.path(); }
  const std::string& config_path() const { return config_path_; }
  const std::string& socket() const { return socket_; }
  NotifyReceiver& notify() { return notify_; }
  // The READY=1 the constructor waited for (with its STATUS=).
  const Notification& ready() const { return ready_; }
  // The daemon's stream id, from its start line.
  std::string stream();

  void write_config(const std::string& json) const;
  // SIGHUP, then waits until the reload is over (RELOADING=1, then READY=1); returns that
  // READY=1. Whether it took the new configuration is in the log (require_log).
  Notification reload(Duration timeout = std::chrono::seconds(20));
  // Waits for a STATUS= that counts `n` subscribers (the daemon says so at every connect and
  // disconnect), among the notifications not read yet.
  Notification require_subscribers(size_t n, Duration timeout = std::chrono::seconds(20));
  // The daemon's status reply (rdma-eventctl status --json): a connection of its own.
  nlohmann::json status() const;

  // The next line of its standard output (--print-records: a record).
  std::string next_record_line(Duration timeout = std::chrono::seconds(20));

  // Whether a log line read so far contains `text` (lines before the current wait position too).
  bool logged(const std::string& text);
  // Waits for a log line (stderr) after the ones already waited for, containing `text`.
  std::string require_log(const std::string& text, Duration timeout = std::chrono::seconds(20));
  // The last log lines, for failure messages.
  std::string log_tail(size_t lines = 20);

  // SIGTERM and wait; returns how it ended.
  ExitStatus stop();

 private:
  void wait_ready(Duration timeout);

  TempDir dir_{"rdma-daemon"};
  std::string config_path_;
  std::string socket_;
  NotifyReceiver notify_;
  Notification ready_;
  std::unique_ptr<Process> proc_;
};

}  // namespace rdmatest
