#include "daemon_process.h"

#include <gtest/gtest.h>

#include "journal_sandbox.h"
#include "paths.h"

namespace rdma_eventd::test {

using rdmatest::HarnessError;

DaemonProcess::DaemonProcess(const rdmatest::SimFabric& sim, const DaemonOptions& options) {
  JournalSandbox::instance();  // records go to the sandbox's journald, never the host's
  config_path_ = dir_.write("rdma-eventd.json", options.config_json);
  // A socket of its own: the default path would be shared by every daemon of the test.
  socket_ = options.socket.empty() ? dir_.file("events.sock") : options.socket;
  std::vector<std::string> argv = {
      rdmatest::bin("rdma-eventd"), "-f", "-c", config_path_, "--socket", socket_};
  if (options.print_records) argv.push_back("--print-records");
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  rdmatest::SpawnOptions spawn;
  spawn.set = options.env;
  proc_ = std::make_unique<rdmatest::Process>(sim.spawn(argv, spawn));
  const std::string started = proc_->require_line(rdmatest::contains("started: stream "), 20s,
                                                  rdmatest::Stream::kStderr, "the start line");
  const auto pos = started.find("stream ") + 7;
  stream_ = started.substr(pos, started.find(',', pos) - pos);
  if (options.wait_ready) require_log("ready: ");
}

// Every daemon a test leaves running must stop cleanly: exit 0 on SIGTERM, which in a sanitizer
// build also means no leak and no sanitizer report.
DaemonProcess::~DaemonProcess() {
  if (!proc_) return;
  if (auto problem = rdmatest::stop_expecting_clean_exit(*proc_)) ADD_FAILURE() << *problem;
}

void DaemonProcess::write_config(const std::string& json) const {
  dir_.write("rdma-eventd.json", json);
}

std::string DaemonProcess::next_record_line(rdmatest::Duration timeout) {
  return proc_->require_next_line(timeout, rdmatest::Stream::kStdout);
}

Record DaemonProcess::next_record(rdmatest::Duration timeout) {
  const std::string line = next_record_line(timeout);
  std::string error;
  auto r = record_from_json(line, &error);
  if (!r) throw HarnessError("not a record (" + error + "): " + line);
  return *r;
}

bool DaemonProcess::logged(const std::string& text) {
  proc_->pump();
  for (const auto& l : proc_->stderr_lines()) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string DaemonProcess::require_log(const std::string& text, rdmatest::Duration timeout) {
  return proc_->require_line(rdmatest::contains(text), timeout, rdmatest::Stream::kStderr,
                             "a log line containing '" + text + "'");
}

std::vector<nlohmann::json> DaemonProcess::journal_entries(size_t count,
                                                           rdmatest::Duration timeout) {
  std::vector<nlohmann::json> entries;
  const bool got = rdmatest::wait_until(
      [&] {
        entries = JournalSandbox::instance().entries({"RDMA_STREAM=" + stream_});
        return entries.size() >= count;
      },
      timeout);
  if (!got) {
    throw HarnessError("expected " + std::to_string(count) + " journal entries of stream " +
                       stream_ + ", found " + std::to_string(entries.size()) + "\n" +
                       proc_->describe());
  }
  return entries;
}

nlohmann::json DaemonProcess::status() const {
  const rdmatest::CommandResult r = rdmatest::run_command(
      {rdmatest::bin("rdma-eventctl"), "--socket", socket_, "status", "--json"}, {}, 30s);
  if (r.exit_code() != 0) throw HarnessError("rdma-eventctl status failed: " + r.err);
  return nlohmann::json::parse(r.out);
}

rdmatest::ExitStatus DaemonProcess::stop() {
  return proc_->stop();
}

}  // namespace rdma_eventd::test
