// The daemon's own log lines with their priority, when systemd connected its standard error to
// the journal.
//
// journald stores a line of a service's stdout/stderr stream at the stream's default priority
// (info) unless the line starts with a syslog priority prefix, "<3>" for an error
// (SyslogLevelPrefix=, on by default). So under systemd every line is written as "<N>text", and
// `journalctl -u rdma-eventd -p err` shows the daemon's own errors.
//
// Why the prefixes on the stream systemd made, rather than spdlog's systemd sink (a native
// sd_journal_send of each line):
// - sd_journal_send writes to journald's datagram socket, the one the journal writer keeps full
//   under a storm: a log line from the loop would wait behind the records exactly when journald
//   is slow. And with journald stopped it fails (the very line that says so would be lost).
// - The stream is the unit's: systemd opened it, journald keeps it across its own restarts (its
//   file descriptor store), and lines written while journald is away wait in the socket's
//   buffer. `journalctl -u rdma-eventd` shows them under the unit's SYSLOG_IDENTIFIER.
// - It needs no libsystemd at all.
// Writing never blocks the loop: each line is sent with MSG_DONTWAIT. A line that does not fit
// in the socket's buffer (journald stalled for a long time) is dropped and counted, and the
// next line that gets through is preceded by one saying how many were dropped.
#pragma once

#include <spdlog/sinks/base_sink.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace rdma_eventd::daemon {

// Whether `fd` is the journal stream systemd connected: `journal_stream` is $JOURNAL_STREAM,
// "device:inode" of that stream, compared with fstat(fd) (a process started by the service
// with its stderr redirected elsewhere inherits the variable; then they differ). nullptr: no.
bool is_journal_stream(int fd, const char* journal_stream);

// spdlog sink: "<N>message\n" on `fd` (not owned), N the syslog priority of the level; every
// line of a message that has several gets the prefix.
class JournalStreamSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JournalStreamSink(int fd) : fd_(fd) {}

  // Log lines dropped since the last one that got through (zero while the stream takes them).
  uint64_t dropped() {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  // Sends what it can without waiting; returns the bytes sent, or -1 when none could be.
  ssize_t send_some(std::string_view text);
  bool send_pending();

  int fd_;
  uint64_t dropped_ = 0;
  // The unsent end of a line the stream took only part of, sent before anything else: a line
  // is never cut in two. At most one message.
  std::string pending_;
};

}  // namespace rdma_eventd::daemon
