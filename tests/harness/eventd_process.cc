#include "eventd_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "paths.h"

namespace rdmatest {

using namespace std::chrono_literals;

namespace {

// The test's configuration with health.enabled set as the test asks, unless it says itself. A
// text that is not a JSON object (a test of a bad configuration) is left as it is.
std::string with_health(const std::string& config_json, bool health) {
  nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  if (!config.is_object()) return config_json;
  nlohmann::json& h = config["health"];
  if (!h.is_null() && !h.is_object()) return config_json;
  if (!h.contains("enabled")) h["enabled"] = health;
  return config.dump();
}

}  // namespace

DaemonProcess::DaemonProcess(const SimFabric& sim, const DaemonOptions& options)
    : config_path_(
          dir_.write("rdma-eventd.json", with_health(options.config_json, options.health))),
      // A socket of its own: the default path would be shared by every daemon of the test.
      socket_(options.socket.empty() ? dir_.file("events.sock") : options.socket) {
  std::vector<std::string> argv = {bin("rdma-eventd"), "-f",       "-c",
                                   config_path_,       "--socket", socket_};
  if (!options.journal) argv.push_back("--no-journal");
  if (options.print_records) argv.push_back("--print-records");
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  SpawnOptions spawn;
  spawn.set = options.env;
  // Port health keeps its state file here, never in the host's /var/lib.
  spawn.set.emplace("STATE_DIRECTORY", dir_.path());
  proc_ = std::make_unique<Process>(sim.spawn(argv, notify_.spawn_options(spawn)));
  if (options.wait_ready) wait_ready(30s);
}

// Every daemon a test leaves running must stop cleanly: exit 0 on SIGTERM, which in a sanitizer
// build also means no leak and no sanitizer report.
DaemonProcess::~DaemonProcess() {
  if (auto problem = stop_expecting_clean_exit(*proc_)) ADD_FAILURE() << *problem;
}

void DaemonProcess::wait_ready(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    // In slices, to notice a daemon that exits instead (a startup failure) at once rather than
    // at the deadline. READY=1 itself is taken the moment it comes.
    const Duration left = deadline - Clock::now();
    if (auto m = notify_.next(std::min<Duration>(left, 200ms))) {
      if (!m->has("READY", "1")) continue;
      ready_ = *m;
      break;
    }
    if (!proc_->running()) {
      throw HarnessError("the daemon exited before it was ready\n" + proc_->describe());
    }
    if (Clock::now() >= deadline) {
      throw HarnessError("no READY=1 from the daemon; notifications:" + notify_.describe() + "\n" +
                         proc_->describe());
    }
  }
  // Later waits for log lines look only at what comes after startup.
  while (proc_->next_line(0s, Stream::kStderr)) {
  }
}

std::string DaemonProcess::stream() {
  proc_->pump();
  const std::string start = "started: stream ";
  for (const std::string& line : proc_->stderr_lines()) {
    const size_t pos = line.find(start);
    if (pos == std::string::npos) continue;
    const size_t begin = pos + start.size();
    return line.substr(begin, line.find(',', begin) - begin);
  }
  throw HarnessError("no start line in the daemon's log\n" + proc_->describe());
}

void DaemonProcess::write_config(const std::string& json) const {
  dir_.write("rdma-eventd.json", json);
}

Notification DaemonProcess::reload(Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  if (!proc_->signal(SIGHUP))
    throw HarnessError("reload: the daemon is gone\n" + proc_->describe());
  notify_.require([](const Notification& m) { return m.has("RELOADING", "1"); }, timeout,
                  "RELOADING=1");
  return notify_.require([](const Notification& m) { return m.has("READY", "1"); },
                         deadline - Clock::now(), "READY=1 after RELOADING=1");
}

Notification DaemonProcess::require_subscribers(size_t n, Duration timeout) {
  // The status line ends "..., 1 subscriber" or "..., 2 subscribers" (core/service_status).
  const std::string count = ", " + std::to_string(n) + (n == 1 ? " subscriber" : " subscribers");
  return notify_.require([&](const Notification& m) { return m.value("STATUS").ends_with(count); },
                         timeout, "STATUS= ending with '" + count + "'");
}

nlohmann::json DaemonProcess::status() const {
  const CommandResult r =
      run_command({bin("rdma-eventctl"), "--socket", socket_, "status", "--json"}, {}, 30s);
  if (r.exit_code() != 0) throw HarnessError("rdma-eventctl status failed: " + r.err);
  return nlohmann::json::parse(r.out);
}

std::string DaemonProcess::next_record_line(Duration timeout) {
  return proc_->require_next_line(timeout, Stream::kStdout);
}

bool DaemonProcess::logged(const std::string& text) {
  proc_->pump();
  for (const auto& l : proc_->stderr_lines()) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string DaemonProcess::require_log(const std::string& text, Duration timeout) {
  return proc_->require_line(contains(text), timeout, Stream::kStderr,
                             "a log line containing '" + text + "'");
}

std::string DaemonProcess::log_tail(size_t lines) {
  proc_->pump();
  const auto& all = proc_->stderr_lines();
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "\n  " + all[i];
  return out;
}

ExitStatus DaemonProcess::stop() {
  return proc_->stop();
}

}  // namespace rdmatest
