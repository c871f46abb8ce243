// The floor under fan-out: what writing each event to each subscriber's socket costs on this
// machine, with nothing else done.
//
// A writer process stands in for the daemon with everything but the fan-out taken away: it
// accepts the subscribers on a Unix socket, greets each with a hello line, and for every byte
// it reads from a pipe (one event) writes one record-sized line to every subscriber. Events
// that are ready together go out together, one send per subscriber per batch, as the daemon's
// hub writes. No device, no query, no JSON, no journal, no queue. The bench program triggers
// the events at a fixed rate and reads the lines with the same subscriber reader as the latency
// runs, so its samples, the writer's CPU time per event and the reader's share of the CPU
// compare one to one with the daemon's: what the writer needs is the least a daemon needs that
// writes every event to every subscriber's socket.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "latency_samples.h"
#include "proc_stats.h"
#include "subscribers.h"

namespace rdma_eventd::bench {
namespace {

using nlohmann::json;

UniqueFd listen_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw BenchError(path + ": path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw BenchError(errno_text("socket"));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw BenchError(errno_text("bind " + path));
  if (::listen(fd.get(), SOMAXCONN) != 0) throw BenchError(errno_text("listen"));
  return fd;
}

// A record-sized line: {"schema":1,"seq":N,...} padded to `bytes` with its newline.
std::string line_for(uint64_t seq, size_t bytes) {
  std::string l = R"({"schema":1,"seq":)" + std::to_string(seq) + R"(,"pad":")";
  const size_t tail = 3;  // "}\n
  if (l.size() + tail < bytes) l.append(bytes - l.size() - tail, 'x');
  l += "\"}\n";
  return l;
}

// Blocking: a subscriber whose socket is full is waited for (the reader drains every socket),
// so nothing is lost and every line is whole.
bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The writer process: returns the exit status. Exits when the trigger pipe closes.
int run_writer(int listen_fd, int trigger_fd, size_t record_bytes) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return 2;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listen_fd;
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev) != 0) return 2;
  ev.data.fd = trigger_fd;
  if (::epoll_ctl(ep, EPOLL_CTL_ADD, trigger_fd, &ev) != 0) return 2;
  const std::string hello = R"({"type":"hello","seq":0})"
                            "\n";
  std::vector<int> subs;
  uint64_t seq = 0;
  uint64_t failed_sends = 0;
  for (;;) {
    epoll_event ready[2];
    const int n = ::epoll_wait(ep, ready, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 2;
    for (int i = 0; i < n; ++i) {
      if (ready[i].data.fd == listen_fd) {
        for (int fd; (fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
          if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(hello.size()))
            return 2;
          subs.push_back(fd);
        }
        continue;
      }
      char buf[256];
      const ssize_t got = ::read(trigger_fd, buf, sizeof buf);
      if (got == 0) return failed_sends == 0 ? 0 : 3;
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return 2;
      }
      // The events that are ready together go out together: one send per subscriber per
      // batch, as the daemon writes (one sendmsg per subscriber per batch of records).
      std::string batch;
      for (ssize_t e = 0; e < got; ++e)
        batch += line_for(++seq, record_bytes);
      for (int fd : subs)
        if (!send_all(fd, batch)) ++failed_sends;
    }
  }
}

}  // namespace

int cmd_floor(int argc, char** argv) {
  const Args a(
      argc, argv,
      {"socket", "subscribers", "events", "rate", "record-bytes", "figure", "run", "results"}, {});
  const uint64_t events = a.num("events");
  const uint64_t rate = a.num("rate", 1000);
  const size_t nsubs = a.num("subscribers", 1);
  const size_t record_bytes = a.num("record-bytes", 560);
  const std::string path = a.str("socket");
  if (events == 0 || rate == 0) throw BenchError("--events and --rate must be positive");

  // The writer is forked before this process has any thread.
  UniqueFd listener = listen_unix(path);
  int trigger[2];
  if (::pipe2(trigger, O_CLOEXEC) != 0) throw BenchError(errno_text("pipe2"));
  const pid_t writer = ::fork();
  if (writer < 0) throw BenchError(errno_text("fork"));
  if (writer == 0) {
    ::close(trigger[1]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::_exit(run_writer(listener.get(), trigger[0], record_bytes));
  }
  ::close(trigger[0]);
  listener = UniqueFd();
  UniqueFd trigger_w(trigger[1]);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  json r;
  bool complete = false;
  {
    SubscriberSet subs(path, nsubs);
    LatencySamples samples(nsubs, events);
    subs.start(events, samples.hook(subs));
    const CpuTime cpu_before = cpu_time(writer);
    const int64_t period = 1000000000 / static_cast<int64_t>(rate);
    const int64_t start = mono_ns() + 10000000;
    for (uint64_t k = 0; k < events; ++k) {
      sleep_until(start + static_cast<int64_t>(k) * period);
      samples.injected(k, mono_ns());
      if (::write(trigger_w.get(), "e", 1) != 1) throw BenchError(errno_text("write trigger"));
    }
    const int64_t end_inject = mono_ns();
    complete = subs.wait(end_inject + 30'000'000'000);
    const CpuTime cpu = cpu_time(writer) - cpu_before;
    const StreamTotals totals = subs.stop_and_total();

    r = {
        {"kind", "floor"},
        {"figure", a.str("figure", "")},
        {"run", a.num("run", 0)},
        {"subscribers", nsubs},
        {"events", events},
        {"rate", rate},
        {"record_bytes", record_bytes},
        {"complete", complete},
        {"records", totals.records},
        {"missing", totals.missing + totals.lost_records},
        {"reader_busy", totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0}};
    samples.summarize(r);
    add_cpu(r, cpu, events);
  }
  trigger_w = UniqueFd();  // end of the events: the writer exits
  int status = 0;
  while (::waitpid(writer, &status, 0) < 0 && errno == EINTR) {
  }
  ::unlink(path.c_str());
  r["writer_exit"] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  emit_result(a.str("results", ""), r.dump());
  return complete && r["writer_exit"] == 0 ? 0 : 1;
}

}  // namespace rdma_eventd::bench
