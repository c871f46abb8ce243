// rdma-eventd: parse the command line, load the configuration, start, run.
#include <fcntl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/daemon.h"
#include "app/options.h"
#include "config/config.h"
#include "rdma_eventd/internal/unique_fd.h"
#include "systemd/journal_stream_log.h"

using namespace rdma_eventd::daemon;

namespace {

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

// Paths given relative to where the daemon was started keep naming the same files once it has
// moved to "/" (the configuration is read again on SIGHUP).
void make_paths_absolute(Options& o) {
  const auto absolute = [](std::string& path) {
    std::error_code error;  // no working directory: the path stays as given
    const std::filesystem::path p = std::filesystem::absolute(path, error);
    if (!error) path = p.string();
  };
  absolute(o.config_path);
  if (o.socket_path) absolute(*o.socket_path);
}

// What a detached daemon lets go of: the directory it was started in (which it would keep
// busy), and the terminal's input and output (not its records' with --print-records). Standard
// error stays: it is the daemon's log, and startup errors reach whoever started it.
bool leave_the_terminal(bool keep_stdout) {
  if (chdir("/") != 0) return false;
  const rdma_eventd::internal::UniqueFd null(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null) return false;
  if (dup2(null.get(), STDIN_FILENO) < 0) return false;
  return keep_stdout || dup2(null.get(), STDOUT_FILENO) >= 0;
}

// Without --foreground: fork, let the child start, and exit with its startup result, so
// "rdma-eventd && echo started" means it is running with its devices open. Returns in the child
// only, with the write end of the readiness pipe.
rdma_eventd::internal::UniqueFd detach_and_wait(const Options& o) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {};
  rdma_eventd::internal::UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t pid = fork();
  if (pid < 0) return {};
  if (pid == 0) {
    read_end.reset();
    setsid();
    if (!leave_the_terminal(o.print_records)) return {};
    return write_end;
  }
  write_end.reset();
  char byte = 0;
  const ssize_t n = read(read_end.get(), &byte, 1);
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
  Options options = std::get<Options>(parsed);

  ConfigResult config = load_configuration(options);
  if (auto* err = std::get_if<ConfigError>(&config)) {
    startup_error(err->message());
    return kExitConfig;
  }
  if (options.check_config) {
    std::printf("%s: configuration OK\n",
                config_file(options).value_or("built-in defaults").c_str());
    return 0;
  }
  const Config& cfg = std::get<Config>(config);
  const std::string level = options.log_level.value_or(cfg.log_level);
  if (spdlog::level::from_str(level) == spdlog::level::off && level != "off") {
    startup_error("unknown log level '" + level +
                  "' (trace, debug, info, warning, error, critical, off)");
    return kExitUsage;
  }

  rdma_eventd::internal::UniqueFd ready;  // the parent waits on it until startup is done
  if (!options.foreground) {
    make_paths_absolute(options);
    ready = detach_and_wait(options);
    if (!ready) {
      std::perror("rdma-eventd: cannot detach");
      return 1;
    }
  }
  setup_logging(level);
  try {
    Daemon daemon(options, cfg);
    daemon.start();
    if (ready) {
      const char ok = 1;
      (void)!write(ready.get(), &ok, 1);
      ready.reset();
    }
    return daemon.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
