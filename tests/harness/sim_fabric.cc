#include "sim_fabric.h"

#include <cstdlib>

#include "paths.h"

namespace rdmatest {

using nlohmann::json;

SimFabric::SimFabric(const std::string& topology_path, const SimOptions& options)
    : tmp_(std::make_unique<TempDir>("rdma-sim", memory_tmp_base())), dir_(tmp_->file("fabric")) {
  std::vector<std::string> argv = {rdma_sim_bin(), "start", "--foreground", "--dir", dir_};
  if (!topology_path.empty()) argv.insert(argv.end(), {"-t", topology_path});
  if (options.query_latency_us)
    argv.insert(argv.end(), {"--query-latency-us", std::to_string(options.query_latency_us)});
  if (options.no_rdma) argv.push_back("--no-rdma");
  if (options.udev) argv.push_back("--udev");
  if (!options.rdma_netlink.empty())
    argv.insert(argv.end(), {"--rdma-netlink", options.rdma_netlink});
  kernel_release_ = options.rdma_netlink == "rename-less" ? "6.12.0"
                    : options.rdma_netlink == "none"      ? "6.1.0"
                                                          : "6.13.0";
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  SpawnOptions so;
  so.unset = {"RDMA_SIM_DIR"};
  sim_ = std::make_unique<Process>(Process::spawn(argv, so));
  sim_->require_line([this](const std::string& l) { return l == "ready " + dir_; },
                     options.ready_timeout, Stream::kStdout, "\"ready " + dir_ + "\"");
}

SimFabric::~SimFabric() {
  try {
    stop();
  } catch (const std::exception&) {
    // ~Process kills it by PID whatever happened.
  }
}

ExitStatus SimFabric::stop() {
  if (!sim_->running()) return sim_->exit_status().value_or(ExitStatus{});
  // The CLI returns once the simulator has exited; the foreground process then ends with 0.
  try {
    run_command({rdma_sim_bin(), "--dir", dir_, "stop"}, {}, std::chrono::seconds(30));
  } catch (const HarnessError&) {
  }
  if (auto s = sim_->wait_exit(std::chrono::seconds(30))) return *s;
  return sim_->stop(std::chrono::seconds(5));
}

CommandResult SimFabric::ctl(const std::vector<std::string>& args, Duration timeout) const {
  std::vector<std::string> argv = {rdma_sim_bin(), "--dir", dir_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, {}, timeout);
}

json SimFabric::ctl_json(const std::vector<std::string>& args, Duration timeout) const {
  std::vector<std::string> with_json = {"--json"};
  with_json.insert(with_json.end(), args.begin(), args.end());
  const CommandResult r = ctl(with_json, timeout);
  try {
    return json::parse(r.out);
  } catch (const json::exception& e) {
    throw HarnessError("rdma-sim --json printed no JSON object (" + r.status.describe() +
                       ")\nstdout: " + r.out + "\nstderr: " + r.err);
  }
}

json SimFabric::stats() const {
  return ctl_json({"stats"});
}
json SimFabric::show() const {
  return ctl_json({"show"});
}

json SimFabric::wait_stats(const std::function<bool(const json&)>& pred, Duration timeout,
                           const std::string& what) const {
  json last;
  if (wait_until([&] { return pred(last = stats()); }, timeout)) return last;
  throw HarnessError("waited in vain for " + what + "; last stats:\n" + last.dump(2));
}

std::map<std::string, std::string> SimFabric::env() const {
  const char* old = std::getenv("LD_LIBRARY_PATH");
  return {{"LD_LIBRARY_PATH", standin_libdir() + (old && *old ? std::string(":") + old : "")},
          {"RDMA_SIM_DIR", dir_}};
}

SpawnOptions SimFabric::spawn_options(SpawnOptions base) const {
  for (const auto& [k, v] : env())
    base.set[k] = v;
  return base;
}

Process SimFabric::spawn(const std::vector<std::string>& argv, SpawnOptions base) const {
  return Process::spawn(argv, spawn_options(std::move(base)));
}

CommandResult SimFabric::run(const std::vector<std::string>& argv, SpawnOptions base,
                             Duration timeout) const {
  return run_command(argv, spawn_options(std::move(base)), timeout);
}

void inject(const SimFabric& sim, const std::vector<std::string>& args) {
  const CommandResult r = sim.ctl(args);
  if (r.exit_code() != 0) {
    std::string cmd;
    for (const auto& a : args)
      cmd += " " + a;
    throw HarnessError("rdma-sim" + cmd + " refused (" + r.status.describe() + "): " + r.err);
  }
}

std::function<bool(const std::string&)> starts_with(const std::string& prefix) {
  return [prefix](const std::string& l) { return l.rfind(prefix, 0) == 0; };
}

std::function<bool(const std::string&)> contains(const std::string& text) {
  return [text](const std::string& l) { return l.find(text) != std::string::npos; };
}

}  // namespace rdmatest
