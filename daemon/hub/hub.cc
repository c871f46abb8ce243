#include "hub/hub.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/clock.h"
#include "hub/subscriber.h"

namespace rdma_eventd::daemon {
namespace {

constexpr size_t kReadPerWakeup = 64 * 1024;
constexpr size_t kIovPerWrite = 64;
// Accepted connections of non-root peers logged at info per second (and in a burst).
constexpr uint32_t kConnectLinesPerSecond = 10;

UnixListener open_listener(const SocketConfig& config, internal::UniqueFd passed) {
  if (passed) return UnixListener(std::move(passed));
  return UnixListener(config.path, config.mode, config.group);
}

}  // namespace

SubscriberHub::SubscriberHub(EventLoop& loop, StateSource& state, Identity identity,
                             const SocketConfig& config, const ReportsConfig& reports,
                             PassedSockets passed)
    : loop_(loop),
      state_(state),
      identity_(std::move(identity)),
      config_(config),
      listener_(open_listener(config, std::move(passed.events))),
      accept_watch_(loop, listener_.fd(), Priority::kSubscribers,
                    [this](bool, bool) { on_accept(Role::kSubscriber); }),
      accept_retry_(loop,
                    [this] {
                      accept_watch_.watch(true, false);
                      if (report_watch_) report_watch_->watch(true, false);
                    }),
      connect_log_budget_(kConnectLinesPerSecond, monotonic_us()),
      ring_(config.ring_records),
      reports_config_(reports) {
  accept_watch_.watch(true, false);
  if (listener_.passed()) {
    spdlog::info("subscribers: listening on {} (passed by the service manager)", listener_.path());
  } else {
    spdlog::info("subscribers: listening on {} (mode {:04o}{}{})", listener_.path(), config.mode,
                 config.group.empty() ? "" : ", group ", config.group);
  }
  open_report_listener(config, std::move(passed.report));
  if (const uint64_t limit = raise_fd_limit(wanted_fds()); limit < wanted_fds()) {
    spdlog::warn(
        "subscribers: socket.max_subscribers ({}) and reports.max_reporters ({}) want {} "
        "descriptors but RLIMIT_NOFILE is {}: connections are refused once descriptors run out",
        config_.max_subscribers, reports_config_.max_reporters, wanted_fds(), limit);
  }
}

SubscriberHub::~SubscriberHub() = default;

// --- records ----------------------------------------------------------------------------------

void SubscriberHub::publish(const RecordPtr& rec) {
  RecordPtr evicted = ring_.push(rec);
  const RecordKey key = rec->key();
  const LinePtr line = line_of(rec);
  for (Subscriber* ptr : walk_) {
    Subscriber& s = *ptr;
    if (s.closed) continue;
    if (s.replay_next) {
      // A replay that the ring overtakes loses the record it was about to send.
      if (evicted && *s.replay_next <= evicted->seq) {
        if (s.filter.matches(evicted->key())) s.out.push_lost({evicted->seq, evicted->seq, 1});
        s.replay_next = evicted->seq + 1;
      }
      s.pending_write = true;
      continue;
    }
    if (s.draining() || !s.filter.matches(key)) continue;
    s.out.push_record(rec->seq, line);
    s.pending_write = true;
  }
  if (evicted && evicted.use_count() == 1) spare_ = std::move(evicted);
}

void SubscriberHub::flush() {
  clock_us_ = monotonic_us();
  for (Subscriber* ptr : walk_) {
    Subscriber& s = *ptr;
    if (!s.pending_write || s.closed) continue;
    write(s);
    const uint64_t lost = s.out.stats().records_lost;
    if (lost != s.lost_logged) {
      // Once at warning per subscriber: a stuck client would otherwise log on every batch.
      const auto level = s.lost_logged == 0 ? spdlog::level::warn : spdlog::level::debug;
      spdlog::log(level,
                  "subscriber {} (pid {}) reads too slowly: {} records dropped so far, told so "
                  "with a \"lost\" line",
                  s.id, s.pid, lost);
      s.lost_logged = lost;
    }
  }
}

// --- connections ------------------------------------------------------------------------------

void SubscriberHub::on_io(Subscriber& s, bool readable, bool writable) {
  if (s.closed) return;
  clock_us_ = monotonic_us();
  if (readable && !s.draining()) read_requests(s);
  if (s.closed) return;
  if (writable || s.pending_write) write(s);
}

void SubscriberHub::read_requests(Subscriber& s) {
  char buf[16384];
  size_t total = 0;
  while (total < kReadPerWakeup) {
    const ssize_t n = ::recv(s.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      s.in.append(buf, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      // The requests already read are still answered; end of file ends the last line.
      s.eof = true;
      if (!s.in.empty() && s.in.back() != '\n') s.in += '\n';
      break;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    close_later(s, std::string("reading: ") + std::strerror(errno));
    return;
  }
  handle_lines(s);
  s.pending_write = true;
}

void SubscriberHub::handle_lines(Subscriber& s) {
  size_t pos = 0;
  while (!s.broken && !s.report) {
    // Requests are answered in order, and a replay is part of its "since" reply: later
    // requests wait until it is queued; so do those after a report, until it is published.
    if (s.replay_next) fill_replay(s);
    if (s.replay_next) break;
    // While the client does not read its replies, its requests wait: this bounds the replies.
    if (s.out.bytes() >= config_.max_queued_bytes) break;
    const size_t nl = s.in.find('\n', pos);
    const size_t end = nl == std::string::npos ? s.in.size() : nl;
    if (end - pos > config_.max_request_bytes) {
      queue_error(s,
                  RequestError{ErrorCode::kRequestTooLong,
                               "a request line is longer than socket.max_request_bytes (" +
                                   std::to_string(config_.max_request_bytes) + " bytes); closing",
                               "", ""});
      s.broken = true;
      s.replay_next.reset();
      s.in.clear();
      return;
    }
    if (nl == std::string::npos) break;
    std::string_view line(s.in.data() + pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    handle_line(s, line);
  }
  s.in.erase(0, pos);
}

void SubscriberHub::write(Subscriber& s) {
  s.pending_write = false;
  for (;;) {
    if (s.hung_up) {
      // Nobody reads the answers: they are dropped, and the requests they held back go on.
      s.replay_next.reset();
      s.out.discard_all();
      if (s.broken || s.report || s.in.find('\n') == std::string::npos) break;
      handle_lines(s);
      continue;
    }
    fill_replay(s);
    if (s.out.empty()) break;
    iovec iov[kIovPerWrite];
    const size_t count = s.out.gather(iov, kIovPerWrite);
    ssize_t n;
    if (count == 1) {
      // One line, as when records come one at a time: send() spares the kernel importing an
      // iovec array, a cost paid per subscriber and per record.
      n = ::send(s.fd.get(), iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = count;
      n = ::sendmsg(s.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET) && !s.broken) {
      spdlog::debug("{} {} (pid {}): gone; reading what it sent", s.kind(), s.id, s.pid);
      s.hung_up = true;
      continue;
    }
    if (n < 0) {
      close_later(s, std::string("writing: ") + std::strerror(errno));
      return;
    }
    s.out.consume(static_cast<size_t>(n));
    // Requests held back while the queue was over its bound can go on now.
    if (!s.broken && s.out.bytes() < config_.max_queued_bytes &&
        s.in.find('\n') != std::string::npos) {
      handle_lines(s);
    }
  }
  if (s.draining() && s.out.empty() && !s.replay_next && !s.report) {
    close_later(s, s.broken ? "protocol error" : "end of file");
    return;
  }
  update_watch(s);
}

void SubscriberHub::fill_replay(Subscriber& s) {
  if (!s.replay_next) return;
  // Half the bound: a replay never makes its own subscriber overflow.
  const size_t limit = config_.max_queued_bytes / 2;
  size_t i = ring_.lower_bound(*s.replay_next);
  for (; i < ring_.size() && s.out.bytes() < limit; ++i) {
    const RecordPtr& rec = ring_.at(i);
    if (s.filter.matches(rec->key())) s.out.push_record(rec->seq, line_of(rec));
    s.replay_next = rec->seq + 1;
  }
  if (i == ring_.size()) s.replay_next.reset();  // caught up: live records from the next one
}

void SubscriberHub::update_watch(Subscriber& s) {
  const bool read = !s.draining() && s.out.bytes() < config_.max_queued_bytes;
  s.watch->watch(read, !s.out.empty());
}

void SubscriberHub::close_later(Subscriber& s, const std::string& why) {
  if (s.closed) return;
  s.closed = true;
  s.watch->watch(false, false);
  spdlog::debug("{} {} (pid {}): closing: {}", s.kind(), s.id, s.pid, why);
  loop_.defer([this, id = s.id] { reap(id); });
  release_slot(s);
}

void SubscriberHub::release_slot(Subscriber& s) {
  if (s.slot_released) return;
  s.slot_released = true;
  if (s.reporter()) {
    --open_reporters_;
    count_user(reporters_per_user_, s.uid, -1);
    refusal_logged_[static_cast<size_t>(Refusal::kReportersFull)] = false;
    return;
  }
  --open_count_;
  count_user(per_user_, s.uid, -1);
  refusal_logged_[static_cast<size_t>(Refusal::kFull)] = false;  // there is room again
  if (subscribers_changed_) subscribers_changed_();
}

void SubscriberHub::reap(uint64_t id) {
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  const Subscriber& s = *it->second;
  if (s.reporter()) {
    reporter_totals_.rate_limited += s.rate_limited;
  } else {
    const OutputQueue::Stats& st = s.out.stats();
    totals_.records_sent += st.records_sent;
    totals_.records_lost += st.records_lost;
    totals_.lost_notices += st.lost_notices;
    totals_.rate_limited += s.rate_limited;
    std::erase(walk_, &s);
  }
  subscribers_.erase(it);
}

// --- configuration and counters ---------------------------------------------------------------

bool SubscriberHub::apply(const SocketConfig& next) {
  const bool same_socket = next.enabled == config_.enabled && next.path == config_.path &&
                           next.mode == config_.mode && next.group == config_.group &&
                           next.ring_records == config_.ring_records;
  config_.max_subscribers = next.max_subscribers;
  config_.max_queued_bytes = next.max_queued_bytes;
  config_.max_request_bytes = next.max_request_bytes;
  config_.max_subscribers_per_user = next.max_subscribers_per_user;
  config_.max_filters = next.max_filters;
  config_.max_requests_per_second = next.max_requests_per_second;
  const bool access_changed =
      next.allow_users != config_.allow_users || next.allow_groups != config_.allow_groups;
  config_.allow_users = next.allow_users;
  config_.allow_groups = next.allow_groups;
  clock_us_ = monotonic_us();
  for (auto& [id, s] : subscribers_) {
    s->out.set_max_bytes(next.max_queued_bytes);
    s->request_budget.set_rate(next.max_requests_per_second, clock_us_);
  }
  if (access_changed) revoke_disallowed();
  raise_fd_limit(wanted_fds());
  return same_socket;
}

HubStats SubscriberHub::stats() const {
  HubStats h = totals_;
  h.subscribers = open_count_;
  for (const auto& [id, s] : subscribers_) {
    if (s->reporter()) continue;
    const OutputQueue::Stats& st = s->out.stats();
    h.records_sent += st.records_sent;
    h.records_lost += st.records_lost;
    h.lost_notices += st.lost_notices;
    h.bytes_queued += s->out.bytes();
    h.rate_limited += s->rate_limited;
  }
  return h;
}

ReporterStats SubscriberHub::reporter_stats() const {
  ReporterStats r = reporter_totals_;
  r.reporters = open_reporters_;
  for (const auto& [id, s] : subscribers_) {
    if (s->reporter()) r.rate_limited += s->rate_limited;
  }
  return r;
}

}  // namespace rdma_eventd::daemon
