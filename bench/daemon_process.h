// The daemon run by the measurements that must see its exec (start-up) or give it a
// notification socket before it starts (idle): spawned here, its stderr read here, and
// stopped here by its PID, also when the bench program is interrupted.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util.h"

namespace rdma_eventd::bench {

// SIGINT and SIGTERM stop every process spawned below (SIGTERM, by PID) before this program
// exits, so an interrupted run leaves nothing behind.
void install_cleanup_handlers();

class DaemonProcess {
 public:
  // Spawns `argv` with the environment plus `extra_env` ("KEY=VALUE"), stdin from /dev/null,
  // stderr to a pipe read here. Returns the time just before the spawn in *spawn_ns.
  DaemonProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                int64_t* spawn_ns);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stderr_fd() const { return err_.get(); }
  // Reads what stderr has now (non-blocking): complete lines appended to `lines`. False at
  // end of file (the daemon exited or closed it).
  bool read_stderr(std::vector<std::string>& lines);
  // Whether it has exited (reaps it), and its last stderr lines for an error message.
  bool exited();
  std::string log_tail() const;
  // SIGTERM, up to 10 s for it to exit, then SIGKILL.
  void stop();

 private:
  pid_t pid_ = -1;
  UniqueFd err_;
  std::string partial_;
  std::vector<std::string> tail_;
};

// The socket a service manager gives a Type=notify service (NOTIFY_SOCKET): a datagram socket
// in the abstract namespace, named after this process.
class NotifySocket {
 public:
  NotifySocket();
  int fd() const { return fd_.get(); }
  // NOTIFY_SOCKET's value ("@name").
  const std::string& address() const { return address_; }
  // One datagram, if one is waiting.
  std::optional<std::string> receive();

 private:
  UniqueFd fd_;
  std::string address_;
};

// True when the datagram carries the assignment `line` ("READY=1", "WATCHDOG=1") as one line.
bool has_line(const std::string& datagram, const std::string& line);

}  // namespace rdma_eventd::bench
