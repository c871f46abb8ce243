#include "subscribers.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace rdma_eventd::bench {
namespace {

constexpr size_t kReadBuffer = 1 << 20;
// Enough of a line to tell what it is and read a record's seq or a whole "lost" line.
constexpr size_t kHeadCap = 256;
constexpr std::string_view kRecordStart = R"({"schema":)";
constexpr std::string_view kLostStart = R"({"type":"lost")";
// Within the first kHeadCap bytes: the event comes after schema, seq, stream, time and host.
constexpr std::string_view kVerdictEvent = R"("event":"port_health")";

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

SubscriberSet::SubscriberSet(const std::string& socket_path, size_t count) {
  raise_nofile_limit();
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) throw BenchError(errno_text("epoll_create1"));
  conns_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Conn& c = conns_[i];
    try {
      c.fd = connect_unix(socket_path);
    } catch (const BenchError& e) {
      throw BenchError("subscriber " + std::to_string(i + 1) + " of " + std::to_string(count) +
                       ": " + e.what());
    }
    std::string carry;
    const std::string hello = read_line(c.fd.get(), carry, 10000);
    const auto j = nlohmann::json::parse(hello);
    if (j.value("type", "") != "hello")
      throw BenchError("subscriber " + std::to_string(i + 1) + ": expected a hello, got " + hello);
    if (!carry.empty())
      throw BenchError("a record arrived before the measurement started: " +
                       carry.substr(0, carry.find('\n')));
    c.base = j.at("seq").get<uint64_t>();
    c.next_seq = c.base + 1;
    c.head.reserve(kHeadCap);
    if (fcntl(c.fd.get(), F_SETFL, O_NONBLOCK) != 0) throw BenchError(errno_text("fcntl"));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c.fd.get(), &ev) != 0)
      throw BenchError(errno_text("epoll_ctl"));
  }
}

SubscriberSet::~SubscriberSet() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SubscriberSet::start(uint64_t expected, RecordHook hook) {
  expected_ = expected;
  hook_ = std::move(hook);
  thread_ = std::thread([this] { run(); });
}

bool SubscriberSet::wait(int64_t deadline_ns) {
  std::unique_lock lock(mu_);
  while (!finished_) {
    const int64_t left = deadline_ns - mono_ns();
    if (left <= 0) return false;
    cv_.wait_for(lock, std::chrono::nanoseconds(std::min<int64_t>(left, 100000000)));
  }
  return conns_done_ == conns_.size();
}

StreamTotals SubscriberSet::stop_and_total() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  StreamTotals t;
  for (const Conn& c : conns_) {
    t.records += c.totals.records;
    t.verdict_records += c.totals.verdict_records;
    t.lost_records += c.totals.lost_records;
    t.lost_lines += c.totals.lost_lines;
    t.missing += c.totals.missing;
    t.unexpected += c.totals.unexpected;
    t.other_lines += c.totals.other_lines;
    t.bytes += c.totals.bytes;
    t.connections_closed += c.totals.connections_closed;
  }
  t.reader_cpu_s = reader_cpu_s_;
  t.reader_wall_s = reader_wall_s_;
  return t;
}

namespace {
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}
}  // namespace

void SubscriberSet::run() {
  const double cpu0 = thread_cpu_s();
  const int64_t wall0 = mono_ns();
  std::vector<char> buf(kReadBuffer);
  std::vector<epoll_event> ready(std::min<size_t>(conns_.size(), 1024));
  size_t open = conns_.size();
  if (expected_ == 0) conns_done_ = conns_.size();
  while (!stop_ && conns_done_ < conns_.size() && open > 0) {
    const int n = epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), 100);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < n; ++i) {
      const size_t index = ready[i].data.u64;
      Conn& c = conns_[index];
      // One read per ready connection per round: every subscriber is served in turn.
      const ssize_t got = ::recv(c.fd.get(), buf.data(), buf.size(), 0);
      const int64_t t = mono_ns();
      if (got > 0) {
        c.totals.bytes += static_cast<uint64_t>(got);
        consume(c, index, buf.data(), static_cast<size_t>(got), t);
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        ++c.totals.connections_closed;
        epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
        --open;
      }
    }
  }
  reader_cpu_s_ = thread_cpu_s() - cpu0;
  reader_wall_s_ = static_cast<double>(mono_ns() - wall0) / 1e9;
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

void SubscriberSet::consume(Conn& c, size_t index, const char* data, size_t n, int64_t t) {
  const char* p = data;
  const char* const end = data + n;
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const size_t len = static_cast<size_t>((nl ? nl : end) - p);
    if (c.head.size() < kHeadCap) c.head.append(p, std::min(len, kHeadCap - c.head.size()));
    c.line_len += len;
    if (!nl) return;
    line(c, index, t);
    c.head.clear();
    c.line_len = 0;
    p = nl + 1;
  }
}

void SubscriberSet::line(Conn& c, size_t index, int64_t t) {
  if (starts_with(c.head, kRecordStart)) {
    const size_t at = c.head.find("\"seq\":");
    const uint64_t seq =
        at == std::string::npos ? 0 : std::strtoull(c.head.c_str() + at + 6, nullptr, 10);
    const bool verdict = c.head.find(kVerdictEvent) != std::string::npos;
    ++(verdict ? c.totals.verdict_records : c.totals.records);
    if (seq == c.next_seq) {
      c.next_seq = seq + 1;
    } else if (seq > c.next_seq) {
      c.totals.missing += seq - c.next_seq;
      c.next_seq = seq + 1;
    } else {
      ++c.totals.unexpected;
      return;
    }
    if (verdict) return;  // not one of the injected events
    if (hook_) hook_(index, seq, t);
    account(c, 1, t);
    return;
  }
  if (starts_with(c.head, kLostStart) && c.line_len == c.head.size()) {
    const auto j = nlohmann::json::parse(c.head, nullptr, false);
    if (!j.is_discarded()) {
      const uint64_t first = j.value("first_seq", uint64_t{0});
      const uint64_t last = j.value("last_seq", uint64_t{0});
      const uint64_t records = j.value("records", uint64_t{0});
      ++c.totals.lost_lines;
      c.totals.lost_records += records;
      if (first > c.next_seq) c.totals.missing += first - c.next_seq;
      c.next_seq = std::max(c.next_seq, last + 1);
      account(c, records, t);
      return;
    }
  }
  ++c.totals.other_lines;
}

void SubscriberSet::account(Conn& c, uint64_t n, int64_t t) {
  c.accounted += n;
  if (c.done || c.accounted + c.totals.missing < expected_) return;
  c.done = true;
  if (++conns_done_ == conns_.size()) done_ns_ = t;
}

nlohmann::json daemon_status(const std::string& socket_path) {
  UniqueFd fd = connect_unix(socket_path);
  std::string carry;
  read_line(fd.get(), carry, 10000);  // the hello
  write_all(fd.get(), R"({"op":"status","id":"bench"})"
                      "\n");
  for (;;) {
    const std::string line = read_line(fd.get(), carry, 10000);
    if (line.rfind(R"({"type":"reply")", 0) == 0) return nlohmann::json::parse(line);
  }
}

}  // namespace rdma_eventd::bench
