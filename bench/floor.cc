// The floor under fan-out: what reading each event from the device and writing it to each
// subscriber's socket costs on this machine, with nothing else done.
//
// A writer process stands in for the daemon with everything but reading the events and the
// fan-out taken away: it opens the device with libibverbs (the simulator's, as the daemon does
// in the latency runs), makes its async fd non-blocking and watches it with epoll, accepts the
// subscribers on a Unix socket and greets each with a hello line; for every async event it
// reads and acks, it writes one record-sized line to every subscriber. The events that are
// ready together go out together, one send per subscriber per batch, as the daemon's hub
// writes; knowing that none is left takes one more read, which finds the fd empty, as it does
// for the daemon. No query, no JSON, no journal, no queue. The bench program injects the events
// exactly as the latency runs do (inject_port_errs: through the simulator's control socket)
// and reads the lines with the same subscriber reader, so its samples, the writer's CPU time
// per event and the reader's share of the CPU compare one to one with the daemon's: what the
// writer needs is the least a daemon needs that reads every event from the device and writes
// it to every subscriber's socket.
#include <fcntl.h>
#include <infiniband/verbs.h>
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
#include "sim_control.h"
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

ibv_context* open_device(const std::string& name) {
  int n = 0;
  ibv_device** list = ::ibv_get_device_list(&n);
  if (!list) return nullptr;
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n && !ctx; ++i)
    if (name == ::ibv_get_device_name(list[i])) ctx = ::ibv_open_device(list[i]);
  ::ibv_free_device_list(list);
  return ctx;
}

// The writer process: returns the exit status. Exits when the stop pipe closes.
int run_writer(int listen_fd, int stop_fd, const std::string& device, size_t record_bytes) {
  ibv_context* ctx = open_device(device);
  if (!ctx) return 4;
  const int async_fd = ctx->async_fd;
  if (::fcntl(async_fd, F_SETFL, ::fcntl(async_fd, F_GETFL) | O_NONBLOCK) != 0) return 2;
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return 2;
  for (const int fd : {listen_fd, stop_fd, async_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) return 2;
  }
  const std::string hello = R"({"type":"hello","seq":0})"
                            "\n";
  std::vector<int> subs;
  uint64_t seq = 0;
  uint64_t failed_sends = 0;
  for (;;) {
    epoll_event ready[3];
    const int n = ::epoll_wait(ep, ready, 3, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 2;
    for (int i = 0; i < n; ++i) {
      if (ready[i].data.fd == stop_fd) return failed_sends == 0 ? 0 : 3;
      if (ready[i].data.fd == listen_fd) {
        for (int fd; (fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
          if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(hello.size()))
            return 2;
          subs.push_back(fd);
        }
        continue;
      }
      // The events that are ready together go out together: one send per subscriber per
      // batch, as the daemon writes (one write per subscriber per batch of records).
      std::string batch;
      ibv_async_event event;
      while (::ibv_get_async_event(ctx, &event) == 0) {
        ::ibv_ack_async_event(&event);
        batch += line_for(++seq, record_bytes);
      }
      if (errno != EAGAIN && errno != EINTR) return 2;
      for (int fd : subs)
        if (!send_all(fd, batch)) ++failed_sends;
    }
  }
}

}  // namespace

int cmd_floor(int argc, char** argv) {
  const Args a(argc, argv,
               {"sim", "socket", "target", "subscribers", "events", "rate", "record-bytes",
                "figure", "run", "results"},
               {});
  const uint64_t events = a.num("events");
  const uint64_t rate = a.num("rate", 1000);
  const size_t nsubs = a.num("subscribers", 1);
  const size_t record_bytes = a.num("record-bytes", 560);
  const std::string path = a.str("socket");
  const std::string target = a.str("target", "mlx5_0/1");
  if (events == 0 || rate == 0) throw BenchError("--events and --rate must be positive");
  const SimControl sim(a.str("sim"));

  // The writer is forked before this process has any thread.
  UniqueFd listener = listen_unix(path);
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) throw BenchError(errno_text("pipe2"));
  const pid_t writer = ::fork();
  if (writer < 0) throw BenchError(errno_text("fork"));
  if (writer == 0) {
    ::close(stop[1]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::_exit(run_writer(listener.get(), stop[0], target.substr(0, target.find('/')), record_bytes));
  }
  ::close(stop[0]);
  listener = UniqueFd();
  UniqueFd stop_w(stop[1]);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  json r;
  bool complete = false;
  {
    SubscriberSet subs(path, nsubs);
    LatencySamples samples(nsubs, events);
    subs.start(events, samples.hook(subs));
    const CpuTime cpu_before = cpu_time(writer);
    const Injection in = inject_port_errs(sim, target, events, rate, samples);
    complete = subs.wait(in.end_ns + 30'000'000'000);
    const CpuTime cpu = cpu_time(writer) - cpu_before;
    const StreamTotals totals = subs.stop_and_total();

    r = {
        {"kind", "floor"},
        {"figure", a.str("figure", "")},
        {"run", a.num("run", 0)},
        {"subscribers", nsubs},
        {"events", events},
        {"rate", rate},
        {"target", target},
        {"record_bytes", record_bytes},
        {"complete", complete},
        {"records", totals.records},
        {"missing", totals.missing + totals.lost_records},
        {"reader_busy", totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0}};
    samples.summarize(r);
    add_cpu(r, cpu, events);
  }
  stop_w = UniqueFd();  // the writer exits
  int status = 0;
  while (::waitpid(writer, &status, 0) < 0 && errno == EINTR) {
  }
  ::unlink(path.c_str());
  r["writer_exit"] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  emit_result(a.str("results", ""), r.dump());
  return complete && r["writer_exit"] == 0 ? 0 : 1;
}

}  // namespace rdma_eventd::bench
