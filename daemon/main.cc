// rdma-eventd: parse the command line, load the configuration, start, run.
#include <fcntl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "app/daemon.h"
#include "app/options.h"
#include "config/config.h"
#include "systemd/journal_stream_log.h"

using namespace rdma_eventd::daemon;

namespace {

// The configuration to run with: the file when given or present, else built-in defaults.
ConfigResult initial_config(const Options& o) {
  if (!o.config_path_given && access(o.config_path.c_str(), F_OK) != 0) return Config{};
  return load_config(o.config_path);
}

// Under systemd, stderr is the journal: lines then carry their priority ("<3>text", read by
// journald; systemd/journal_stream_log.h says why this way).
bool stderr_is_journal() {
  return is_journal_stream(STDERR_FILENO, secure_getenv("JOURNAL_STREAM"));
}

// A startup error, before the log is set up: "rdma-eventd: text" on stderr.
void startup_error(const std::string& text) {
  std::fprintf(stderr, "%srdma-eventd: %s\n", stderr_is_journal() ? "<3>" : "", text.c_str());
}

void setup_logging(const std::string& level) {
  // The daemon's own logs go to stderr; records are separate journal entries with their own
  // fields. Outside the journal, "warning: text".
  std::shared_ptr<spdlog::logger> logger;
  if (stderr_is_journal()) {
    logger = std::make_shared<spdlog::logger>("rdma-eventd",
                                              std::make_shared<JournalStreamSink>(STDERR_FILENO));
  } else {
    logger = spdlog::stderr_color_mt("rdma-eventd");
    logger->set_pattern("%^%l%$: %v");
  }
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
    startup_error(err->message());
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
    startup_error("unknown log level '" + level +
                  "' (trace, debug, info, warning, error, critical, off)");
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
