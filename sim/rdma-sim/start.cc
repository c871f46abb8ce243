// start, stop, run and env.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli.h"
#include "common/protocol.h"
#include "simulator.h"
#include "topology.h"

namespace rdmasim::cli {

using nlohmann::json;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string library_path() {
  const char* old = std::getenv("LD_LIBRARY_PATH");
  return standin_libdir() + (old && *old ? std::string(":") + old : "");
}

void write_all(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

int cmd_start(const Global& g, const Args& a) {
  SimulatorOptions options;
  options.dir = resolve_dir(g);
  options.no_rdma = a.options.count("--no-rdma") > 0;
  options.udev = a.options.count("--udev") > 0;
  if (auto it = a.options.find("--rdma-netlink"); it != a.options.end())
    if (!parse_rdma_netlink_kernel(it->second, &options.rdma_netlink))
      throw UsageError("--rdma-netlink \"" + it->second + "\" is not monitor, rename-less or none");
  if (auto it = a.options.find("--query-latency-us"); it != a.options.end()) {
    const std::string& v = it->second;
    if (v.empty() || v.size() > 8 || v.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(v) > 10000000)
      throw UsageError("--query-latency-us \"" + v +
                       "\" is not a number of microseconds (0..10000000)");
    options.query_latency_us = static_cast<uint32_t>(std::stoul(v));
  }
  Topology topology;
  if (auto it = a.options.find("--topology"); it != a.options.end()) {
    try {
      topology = load_topology(it->second);
    } catch (const TopologyError& e) {
      std::fprintf(stderr, "rdma-sim: %s\n", e.what());
      return kExitConfig;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec)
    throw std::runtime_error("cannot create fabric directory " + options.dir + ": " + ec.message());

  if (a.options.count("--foreground")) {
    Simulator sim(options, std::move(topology));
    std::printf("ready %s\n", options.dir.c_str());
    std::fflush(stdout);
    sim.run();
    return kExitOk;
  }

  // Background: the child becomes the simulator and reports through a pipe once it is ready (or
  // why it could not start), so that `start` returns only when the fabric can be used.
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(ready[0]);
    setsid();
    const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    const std::string log = options.dir + "/" + kLogFile;
    const int logfd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (null >= 0) dup2(null, STDIN_FILENO), dup2(null, STDOUT_FILENO);
    if (logfd >= 0) dup2(logfd, STDERR_FILENO);
    int status = 0;
    try {
      Simulator sim(options, std::move(topology));
      write_all(ready[1], "ok\n");
      close(ready[1]);
      sim.run();
    } catch (const std::exception& e) {
      write_all(ready[1], std::string(e.what()) + "\n");
      std::fprintf(stderr, "rdma-sim: %s\n", e.what());
      status = kExitFailed;
    }
    std::fflush(nullptr);
    _exit(status);
  }
  close(ready[1]);
  std::string message;
  char buf[512];
  ssize_t n;
  while ((n = read(ready[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) message.append(buf, static_cast<size_t>(n));
  close(ready[0]);
  if (message != "ok\n") {
    int status = 0;
    waitpid(pid, &status, 0);
    if (message.empty()) message = "the simulator exited before it was ready\n";
    std::fprintf(stderr, "rdma-sim: %s", message.c_str());
    return kExitFailed;
  }
  if (g.json)
    std::printf("%s\n", json({{"ok", true}, {"dir", options.dir}, {"pid", pid}}).dump().c_str());
  else
    std::printf("%s\n", options.dir.c_str());
  return kExitOk;
}

int cmd_stop(const Global& g, const Args&) {
  const json reply = request(resolve_dir(g), {{"cmd", "stop"}}, /*wait_for_exit=*/true);
  if (g.json)
    std::printf("%s\n", json({{"ok", true}, {"message", "stopped"}}).dump().c_str());
  else
    std::printf("stopped\n");
  return reply.value("ok", false) ? kExitOk : kExitFailed;
}

int cmd_run(const Global& g, const Args& a) {
  if (a.trailing.empty()) throw UsageError("run needs a command after --");
  const std::string dir = resolve_dir(g);
  setenv("LD_LIBRARY_PATH", library_path().c_str(), 1);
  setenv(kDirEnv, dir.c_str(), 1);
  setenv(kDevlinkSocketEnv, (dir + "/" + kDevlinkSocketFile).c_str(), 1);
  setenv(kRdmaNetlinkSocketEnv, (dir + "/" + kRdmaNetlinkSocketFile).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& s : a.trailing)
    argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "rdma-sim: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}

int cmd_env(const Global& g, const Args&) {
  const std::string dir = resolve_dir(g);
  if (g.json) {
    std::printf("%s\n", json({{"ok", true},
                              {"LD_LIBRARY_PATH", library_path()},
                              {kDirEnv, dir},
                              {kDevlinkSocketEnv, dir + "/" + kDevlinkSocketFile},
                              {kRdmaNetlinkSocketEnv, dir + "/" + kRdmaNetlinkSocketFile}})
                            .dump()
                            .c_str());
  } else {
    std::printf("export LD_LIBRARY_PATH=%s\n", shell_quote(library_path()).c_str());
    std::printf("export %s=%s\n", kDirEnv, shell_quote(dir).c_str());
    std::printf("export %s=%s\n", kDevlinkSocketEnv,
                shell_quote(dir + "/" + kDevlinkSocketFile).c_str());
    std::printf("export %s=%s\n", kRdmaNetlinkSocketEnv,
                shell_quote(dir + "/" + kRdmaNetlinkSocketFile).c_str());
  }
  return kExitOk;
}

}  // namespace rdmasim::cli
