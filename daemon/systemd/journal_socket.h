// journald's native socket, connected once by the journal writer.
//
// sd_journal_sendv sends every entry with sendmsg() to the socket's path, so the kernel resolves
// the path for each entry, and it builds the datagram from a vector of fields it scans again.
// The writer instead has the entry written ready (core/journal_native.h) and sends it as one
// datagram on this connected socket. Like
// sd_journal_sendv's socket it blocks while journald's queue is full: only the writer thread ever
// waits on it.
//
// Its send buffer is small on purpose (kSendBuffer, which the kernel doubles to 16 KiB).
// journald's socket queues at most net.unix.max_dgram_qlen + 1 datagrams: 11 with the kernel's
// default of 10, which Debian 12 keeps. With a large send buffer (sd_journal_sendv asks for 8 MiB)
// that queue is the limit under a storm: the writer sleeps on the full queue, and journald wakes
// it with every entry it reads, a task switch per record on both sides. With a small one the
// buffer is the limit, and the kernel wakes a writer waiting for buffer space only once three
// quarters of it are free again, so the writer refills journald's queue several entries at a
// time (docs/benchmarks.md measures both). Every record the daemon makes fits with room to spare
// (a few KiB at most); a larger entry is refused whole (EMSGSIZE).
//
// The connection does not outlive journald: when journald restarts, the next send finds the old
// socket gone and connects to the new one. What the socket cannot take (an entry too large for a
// datagram, which sd_journal_sendv passes in a memfd; journald not there at all) the caller sends
// through sd_journal_sendv, which also says why it failed.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {

class JournalSocket {
 public:
  static constexpr const char* kPath = "/run/systemd/journal/socket";  // as sd-journal's
  static constexpr int kSendBuffer = 8192;  // SO_SNDBUF: 16 KiB once the kernel doubles it

  explicit JournalSocket(std::string path = kPath) : path_(std::move(path)) {}

  // Sends one datagram of the native protocol, as it is. 0, or -errno.
  int send(std::string_view datagram);

 private:
  int connect();

  std::string path_;
  internal::UniqueFd fd_;
};

}  // namespace rdma_eventd::daemon
