// rdma-eventd run for real, against a simulated fabric, for integration tests.
//
//   SimFabric sim(topology("two-adapters"));
//   DaemonProcess d(sim, R"({"severity": {"gid_change": "warning"}})");
//   sim.ctl({"port", "down", "mlx5_0/1"});
//   Record r = d.next_record();          // from --print-records on its stdout
//   auto entries = d.journal_entries(1);  // the same record, read back from journald
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.h"
#include "rdma_eventd/record.h"
#include "sim_fabric.h"
#include "temp_dir.h"

namespace rdma_eventd::test {

using namespace std::chrono_literals;

struct DaemonOptions {
  std::string config_json = "{}";  // written to a file passed with -c
  std::vector<std::string> extra_args;
  bool wait_ready = true;  // wait for the "ready:" log line
  // --print-records: the test must then read the daemon's stdout (next_record), or a storm
  // fills the pipe and the daemon waits for it.
  bool print_records = true;
  std::string socket;  // the subscriber socket; empty: one in the daemon's own directory
  std::map<std::string, std::string> env;  // more environment for the daemon
};

class DaemonProcess {
 public:
  DaemonProcess(const rdmatest::SimFabric& sim, const DaemonOptions& options = {});
  DaemonProcess(const rdmatest::SimFabric& sim, const std::string& config_json)
      : DaemonProcess(sim, DaemonOptions{config_json}) {}
  ~DaemonProcess();

  rdmatest::Process& process() { return *proc_; }
  const std::string& stream() const { return stream_; }
  const std::string& config_path() const { return config_path_; }
  const std::string& socket() const { return socket_; }
  // The daemon's status reply (rdma-eventctl status --json).
  nlohmann::json status() const;
  void write_config(const std::string& json) const;

  // The next record the daemon printed (--print-records), failing the wait after `timeout`.
  Record next_record(rdmatest::Duration timeout = 20s);
  // The raw JSON line of that record.
  std::string next_record_line(rdmatest::Duration timeout = 20s);

  // Whether a log line read so far contains `text` (lines before the current wait position too).
  bool logged(const std::string& text);
  // Waits for a log line (stderr) after the ones already waited for, containing `text`.
  std::string require_log(const std::string& text, rdmatest::Duration timeout = 20s);

  // The journal entries of this daemon's records (RDMA_STREAM=stream), waiting until there are
  // at least `count` of them.
  std::vector<nlohmann::json> journal_entries(size_t count, rdmatest::Duration timeout = 30s);

  // SIGTERM and wait; returns how it ended.
  rdmatest::ExitStatus stop();

 private:
  rdmatest::TempDir dir_{"rdma-daemon"};
  std::string config_path_;
  std::string socket_;
  std::string stream_;
  std::unique_ptr<rdmatest::Process> proc_;
};

}  // namespace rdma_eventd::test
