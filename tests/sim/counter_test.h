// What the port counter tests share: a fabric with one device of each counter layout, and
// reading a counter's file the way a program does (open, then read), errors included.
#pragma once

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "sim_test.h"

namespace simtest {

// mlx5_0: InfiniBand mlx5 (counters/ extended, mlx5 hw_counters/), symbol_error 12 and
//         port_xmit_wait 0xfffffffe from the topology
// rxe0:   Soft-RoCE (no counters/, rxe hw_counters/)
// basic0: counters/ with the basic table (32-bit data counters), no hw_counters/
// both0:  counters/ and rxe's hw_counters/: link_downed in both groups
// bare0:  neither group
inline constexpr const char* kCounterTopology = R"({"devices": [
  {"name": "mlx5_0",
   "ports": [{"lid": 7, "counter_values": {"symbol_error": 12, "port_xmit_wait": "0xfffffffe"}}]},
  {"name": "rxe0", "provider": "rxe", "link_layer": "ethernet", "vendor_id": "0xffffff",
   "vendor_part_id": 0, "ports": [{"netdev": "eth0", "mac": "02:00:00:00:00:10"}]},
  {"name": "basic0", "counters": "basic", "hw_counters": "none", "ports": [{}]},
  {"name": "both0", "counters": "extended", "hw_counters": "rxe", "ports": [{}]},
  {"name": "bare0", "counters": "none", "hw_counters": "none", "ports": [{}]}]})";

// A fabric on kCounterTopology, with the sysfs directory of each port at hand.
struct CounterFabric {
  rdmatest::TempDir tmp;
  Sim sim;
  CounterFabric() : sim(tmp.write("counters.json", kCounterTopology)) {}
  // DIR/sys/class/infiniband/DEV/ports/1/REL
  std::string port_file(const std::string& device, const std::string& rel) const {
    return sim.dir() + "/sys/class/infiniband/" + device + "/ports/1/" + rel;
  }
};

// What a reader meets in a file: its text, or where it failed and how ("open: ENOENT",
// "read: EISDIR").
inline std::string read_as_reader(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("open: ") + strerrorname_np(errno);
  char buf[256];
  const ssize_t n = read(fd, buf, sizeof buf);
  const int err = errno;
  close(fd);
  if (n < 0) return std::string("read: ") + strerrorname_np(err);
  return std::string(buf, static_cast<size_t>(n));
}

// The names in a directory, sorted; empty if it does not exist.
inline std::vector<std::string> dir_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The order in which the simulator renamed files into a sysfs directory and wrote a context's
// event pipe. One inotify queue holds both kinds of change in the order they were made (a watch
// on the pipe, through /proc/PID/fd/FD of its reader, reports every write to it), so "the counter
// was published before the event was queued" is an order in the queue, not a race.
class ChangeOrder {
 public:
  ChangeOrder(const std::string& dir, pid_t reader, int async_fd)
      : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    const std::string pipe = "/proc/" + std::to_string(reader) + "/fd/" + std::to_string(async_fd);
    if (fd_ < 0 || (dir_ = inotify_add_watch(fd_, dir.c_str(), IN_MOVED_TO)) < 0 ||
        (pipe_ = inotify_add_watch(fd_, pipe.c_str(), IN_MODIFY)) < 0)
      throw rdmatest::HarnessError("cannot watch " + dir + " and " + pipe + ": " +
                                   std::strerror(errno));
  }
  ~ChangeOrder() { close(fd_); }
  ChangeOrder(const ChangeOrder&) = delete;
  ChangeOrder& operator=(const ChangeOrder&) = delete;

  // The changes since the last call, oldest first: the name of each file renamed into the
  // directory, "event pipe" for writes to the pipe (inotify merges back-to-back ones).
  std::vector<std::string> take() {
    std::vector<std::string> out;
    alignas(inotify_event) char buf[4096];
    ssize_t n;
    while ((n = read(fd_, buf, sizeof buf)) > 0)
      for (char* p = buf; p < buf + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(p);
        if (e->wd == pipe_) out.push_back("event pipe");
        if (e->wd == dir_ && e->len) out.push_back(e->name);
        p += sizeof(inotify_event) + e->len;
      }
    return out;
  }

 private:
  int fd_;
  int dir_ = -1;
  int pipe_ = -1;
};

inline std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The counters/ of the extended table and rxe's hw_counters/, in the kernel's order.
inline const std::vector<std::string> kExtendedPmaNames = {"symbol_error",
                                                           "link_error_recovery",
                                                           "link_downed",
                                                           "port_rcv_errors",
                                                           "port_rcv_remote_physical_errors",
                                                           "port_rcv_switch_relay_errors",
                                                           "port_xmit_discards",
                                                           "port_xmit_constraint_errors",
                                                           "port_rcv_constraint_errors",
                                                           "local_link_integrity_errors",
                                                           "excessive_buffer_overrun_errors",
                                                           "VL15_dropped",
                                                           "port_xmit_data",
                                                           "port_rcv_data",
                                                           "port_xmit_packets",
                                                           "port_xmit_wait",
                                                           "port_rcv_packets",
                                                           "unicast_rcv_packets",
                                                           "unicast_xmit_packets",
                                                           "multicast_rcv_packets",
                                                           "multicast_xmit_packets"};
inline const std::vector<std::string> kRxeHwNames = {
    "sent_pkts",           "rcvd_pkts",
    "duplicate_request",   "out_of_seq_request",
    "rcvd_rnr_err",        "send_rnr_err",
    "rcvd_seq_err",        "ack_deferred",
    "retry_exceeded_err",  "retry_rnr_exceeded_err",
    "completer_retry_err", "send_err",
    "link_downed",         "rdma_sends",
    "rdma_recvs"};

}  // namespace simtest
