// rdma-eventd: parse the command line, load the configuration, start, run.
#include <fcntl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>

#include "app/daemon.h"
#include "app/options.h"
#include "config/config.h"

using namespace rdma_eventd::daemon;

namespace {

// The configuration to run with: the file when given or present, else built-in defaults.
ConfigResult initial_config(const Options& o) {
  if (!o.config_path_given && access(o.config_path.c_str(), F_OK) != 0) return Config{};
  return load_config(o.config_path);
}

void setup_logging(const std::string& level) {
  // The daemon's own logs go to stderr (the journal captures them under systemd); records are
  // separate entries with their own fields.
  auto logger = spdlog::stderr_color_mt("rdma-eventd");
  logger->set_pattern("%^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::flush_on(spdlog::level::trace);
}

// Without --foreground: fork, let the child start, and exit with its startup result, so
// "rdma-eventd && echo started" means it is running with its devices open.
int detach_and_wait(int* ready_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fds[0]);
    setsid();
    *ready_fd = fds[1];
    return 0;
  }
  close(fds[1]);
  char byte = 0;
  const ssize_t n = read(fds[0], &byte, 1);
  if (n == 1) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = parse_options(argc, argv);
  if (auto* early = std::get_if<EarlyExit>(&parsed)) {
    std::fputs(early->text.c_str(), early->code == 0 ? stdout : stderr);
    return early->code;
  }
  const Options options = std::get<Options>(parsed);

  ConfigResult config = initial_config(options);
  if (auto* err = std::get_if<ConfigError>(&config)) {
    std::fprintf(stderr, "rdma-eventd: %s\n", err->message().c_str());
    return kExitConfig;
  }
  if (options.check_config) {
    std::printf("%s: configuration OK\n",
                options.config_path_given || access(options.config_path.c_str(), F_OK) == 0
                    ? options.config_path.c_str()
                    : "built-in defaults");
    return 0;
  }
  const Config& cfg = std::get<Config>(config);
  const std::string level = options.log_level.value_or(cfg.log_level);
  if (spdlog::level::from_str(level) == spdlog::level::off && level != "off") {
    std::fprintf(stderr,
                 "rdma-eventd: unknown log level '%s' (trace, debug, info, warning, "
                 "error, critical, off)\n",
                 level.c_str());
    return kExitUsage;
  }

  int ready_fd = -1;
  if (!options.foreground && detach_and_wait(&ready_fd) != 0) {
    std::perror("rdma-eventd: cannot detach");
    return 1;
  }
  setup_logging(level);
  try {
    Daemon daemon(options, cfg);
    daemon.start();
    if (ready_fd >= 0) {
      const char ok = 1;
      (void)!write(ready_fd, &ok, 1);
      close(ready_fd);
    }
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
