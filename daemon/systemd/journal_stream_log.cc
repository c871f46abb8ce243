#include "systemd/journal_stream_log.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rdma_eventd::daemon {
namespace {

int syslog_priority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::critical:
      return LOG_CRIT;
    case spdlog::level::err:
      return LOG_ERR;
    case spdlog::level::warn:
      return LOG_WARNING;
    case spdlog::level::info:
      return LOG_INFO;
    default:
      return LOG_DEBUG;  // debug, trace
  }
}

// "<N>" before every line of `text`, each ending in a newline.
void append_lines(std::string& out, int priority, std::string_view text) {
  const char prefix[] = {'<', static_cast<char>('0' + priority), '>'};
  do {
    const size_t end = text.find('\n');
    out.append(prefix, sizeof prefix);
    out.append(text.substr(0, end));
    out += '\n';
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  } while (!text.empty());
}

}  // namespace

bool is_journal_stream(int fd, const char* journal_stream) {
  if (journal_stream == nullptr) return false;
  const std::string_view text(journal_stream);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  uint64_t device = 0;
  uint64_t inode = 0;
  const char* end = text.data() + text.size();
  const auto d = std::from_chars(text.data(), text.data() + colon, device);
  const auto i = std::from_chars(text.data() + colon + 1, end, inode);
  if (d.ec != std::errc() || d.ptr != text.data() + colon || i.ec != std::errc() || i.ptr != end ||
      colon == 0 || colon + 1 == text.size()) {
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  return st.st_dev == device && st.st_ino == inode;
}

void JournalStreamSink::sink_it_(const spdlog::details::log_msg& msg) {
  if (!send_pending()) {
    ++dropped_;
    return;
  }
  std::string text;
  if (dropped_ > 0) {
    append_lines(text, LOG_WARNING,
                 "log: " + std::to_string(dropped_) +
                     " lines were dropped: journald did not read the daemon's log in time");
  }
  append_lines(text, syslog_priority(msg.level),
               std::string_view(msg.payload.data(), msg.payload.size()));
  const ssize_t sent = send_some(text);
  if (sent < 0) {
    ++dropped_;
    return;
  }
  dropped_ = 0;
  pending_.assign(text, static_cast<size_t>(sent));
}

bool JournalStreamSink::send_pending() {
  if (pending_.empty()) return true;
  const ssize_t sent = send_some(pending_);
  if (sent > 0) pending_.erase(0, static_cast<size_t>(sent));
  return pending_.empty();
}

ssize_t JournalStreamSink::send_some(std::string_view text) {
  for (;;) {
    // MSG_DONTWAIT: this call only, the stream itself stays blocking for anyone else who
    // shares it (stdout). MSG_NOSIGNAL: a stream journald closed is an error, not SIGPIPE.
    const ssize_t n = ::send(fd_, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    return n > 0 ? n : -1;
  }
}

}  // namespace rdma_eventd::daemon
