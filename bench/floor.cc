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
// exactly as the latency runs do (inject_at_rate: through the simulator's control socket)
// and reads the lines with the same subscriber reader, so its samples, the writer's CPU time
// per event and the reader's share of the CPU compare one to one with the daemon's: what the
// writer needs is the least a daemon needs that reads every event from the device and writes
// it to every subscriber's socket.
//
// --steps adds parts of the daemon's work to the writer, one by one or together: libevent's
// loop instead of its own epoll_wait, ibv_query_port for each event's port, and each line
// written as a record by the daemon's record writer (as long as the daemon's, the port block
// decoded by the daemon's own verbs::port_attr_of). What the writer then costs per event,
// against the bare writer, is what those parts cost any daemon built on them, on this machine.
#include <endian.h>
#include <event2/event.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "latency_samples.h"
#include "proc_stats.h"
#include "rdma_eventd/record.h"
#include "schema/record_json.h"
#include "sim_control.h"
#include "subscribers.h"
#include "verbs/verbs.h"

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

// What the writer does per event beyond reading it and writing a line (--steps): each is one
// part of the daemon's work, added on its own, to show what each costs a wakeup.
struct Steps {
  bool query = false;   // ibv_query_port for the event's port, as enrichment does
  bool record = false;  // the line is a record (lib/schema's writer) instead of padding;
                        // without query its port block is that of a zeroed ibv_port_attr
  bool loop = false;    // libevent's loop watches the fds instead of a bare epoll_wait

  static Steps parse(const std::string& list) {
    Steps s;
    for (size_t at = 0; at < list.size();) {
      const size_t end = std::min(list.find(',', at), list.size());
      const std::string step = list.substr(at, end - at);
      if (step == "query")
        s.query = true;
      else if (step == "record")
        s.record = true;
      else if (step == "libevent")
        s.loop = true;
      else if (!step.empty())
        throw BenchError("--steps: unknown step '" + step + "' (query, record, libevent)");
      at = end + 1;
    }
    return s;
  }
};

class Writer {
 public:
  Writer(ibv_context* ctx, int listen_fd, size_t record_bytes, Steps steps, std::string device)
      : ctx_(ctx), listen_fd_(listen_fd), record_bytes_(record_bytes), steps_(steps) {
    record_.stream = "a5d2c1e0000040008000000000000000";  // as long as the daemon's
    record_.host = host_name();
    record_.device = std::move(device);
    record_.node_guid = format_guid(be64toh(::ibv_get_device_guid(ctx->device)));
  }

  bool accept_all() {
    static const std::string hello = R"({"type":"hello","seq":0})"
                                     "\n";
    for (int fd; (fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
      if (::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(hello.size()))
        return false;
      subs_.push_back(fd);
    }
    return true;
  }

  // The events that are ready together go out together: one send per subscriber per batch, as
  // the daemon writes (one write per subscriber per batch of records).
  bool drain() {
    batch_.clear();
    ibv_async_event event;
    while (::ibv_get_async_event(ctx_, &event) == 0) {
      const auto port = static_cast<uint32_t>(event.element.port_num);
      const auto type = event.event_type;
      ::ibv_ack_async_event(&event);
      ibv_port_attr attr{};
      if (steps_.query && ::ibv_query_port(ctx_, static_cast<uint8_t>(port), &attr) != 0)
        return false;
      if (steps_.record) {
        append_record(port, type, attr);
      } else {
        batch_ += line_for(++seq_, record_bytes_);
      }
    }
    if (errno != EAGAIN && errno != EINTR) return false;
    for (int fd : subs_)
      if (!send_all(fd, batch_)) ++failed_sends_;
    return true;
  }

  uint64_t failed_sends() const { return failed_sends_; }

 private:
  static std::string host_name() {
    char buf[256] = {};
    return ::gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
  }

  void append_record(uint32_t port, ibv_event_type type, const ibv_port_attr& attr) {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    record_.seq = ++seq_;
    record_.time_us = ts.tv_sec * 1'000'000 + ts.tv_nsec / 1'000;
    record_.event = type == IBV_EVENT_PORT_ERR ? EventKind::kPortErr : EventKind::kUnknown;
    record_.event_type = type;
    record_.severity = Severity::kError;
    record_.port = port;
    const PortInfo now = daemon::verbs::port_attr_of(port, attr).info;
    record_.previous = record_.port_info.value_or(now);
    record_.port_info = now;
    append_json(batch_, record_);
    batch_ += '\n';
  }

  ibv_context* ctx_;
  int listen_fd_;
  size_t record_bytes_;
  Steps steps_;
  Record record_;
  std::string batch_;
  std::vector<int> subs_;
  uint64_t seq_ = 0;
  uint64_t failed_sends_ = 0;
};

int loop_epoll(Writer& w, int listen_fd, int stop_fd, int async_fd) {
  const UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep) return 2;
  for (const int fd : {listen_fd, stop_fd, async_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return 2;
  }
  for (;;) {
    epoll_event ready[3];
    const int n = ::epoll_wait(ep.get(), ready, 3, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 2;
    for (int i = 0; i < n; ++i) {
      if (ready[i].data.fd == stop_fd) return w.failed_sends() == 0 ? 0 : 3;
      const bool ok = ready[i].data.fd == listen_fd ? w.accept_all() : w.drain();
      if (!ok) return 2;
    }
  }
}

// The same with libevent's loop: one event_base, a persistent read event per fd (the daemon's
// loop also has priorities, a callback limit per iteration and timers; this one does not).
int loop_libevent(Writer& w, int listen_fd, int stop_fd, int async_fd) {
  struct State {
    Writer* w;
    event_base* base;
    int rc = 0;
    void fail(int code) {
      rc = code;
      ::event_base_loopbreak(base);
    }
  };
  const std::unique_ptr<event_base, decltype(&event_base_free)> base(::event_base_new(),
                                                                     &event_base_free);
  if (!base) return 2;
  State st{&w, base.get()};
  auto on_listen = [](evutil_socket_t, short, void* p) {
    auto* s = static_cast<State*>(p);
    if (!s->w->accept_all()) s->fail(2);
  };
  auto on_async = [](evutil_socket_t, short, void* p) {
    auto* s = static_cast<State*>(p);
    if (!s->w->drain()) s->fail(2);
  };
  auto on_stop = [](evutil_socket_t, short, void* p) {
    auto* s = static_cast<State*>(p);
    s->fail(s->w->failed_sends() == 0 ? 0 : 3);
  };
  using Event = std::unique_ptr<event, decltype(&event_free)>;
  const Event evs[] = {
      Event(::event_new(base.get(), listen_fd, EV_READ | EV_PERSIST, on_listen, &st), &event_free),
      Event(::event_new(base.get(), async_fd, EV_READ | EV_PERSIST, on_async, &st), &event_free),
      Event(::event_new(base.get(), stop_fd, EV_READ | EV_PERSIST, on_stop, &st), &event_free)};
  for (const Event& e : evs)
    if (!e || ::event_add(e.get(), nullptr) != 0) return 2;
  if (::event_base_dispatch(base.get()) < 0) return 2;
  return st.rc;
}

// The writer process: returns the exit status. Exits when the stop pipe closes.
int run_writer(int listen_fd, int stop_fd, const std::string& device, size_t record_bytes,
               Steps steps) {
  ibv_context* ctx = open_device(device);
  if (!ctx) return 4;
  const int async_fd = ctx->async_fd;
  if (::fcntl(async_fd, F_SETFL, ::fcntl(async_fd, F_GETFL) | O_NONBLOCK) != 0) return 2;
  Writer w(ctx, listen_fd, record_bytes, steps, device);
  return steps.loop ? loop_libevent(w, listen_fd, stop_fd, async_fd)
                    : loop_epoll(w, listen_fd, stop_fd, async_fd);
}

}  // namespace

int cmd_floor(int argc, char** argv) {
  const Args a(argc, argv,
               {"sim", "socket", "target", "subscribers", "events", "rate", "record-bytes",
                "figure", "run", "results", "steps"},
               {});
  const uint64_t events = a.num("events");
  const uint64_t rate = a.num("rate", 1000);
  const Steps steps = Steps::parse(a.str("steps", ""));
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
    ::_exit(run_writer(listener.get(), stop[0], target.substr(0, target.find('/')), record_bytes,
                       steps));
  }
  ::close(stop[0]);
  listener = UniqueFd();
  UniqueFd stop_w(stop[1]);
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

  json r;
  bool complete = false;
  {
    LatencySamples samples(nsubs, events);
    const InjectedRun run =
        run_injected(path, nsubs, sim, port_err_request(target), events, rate, writer, samples);
    complete = run.complete;
    const StreamTotals& totals = run.totals;

    r = injection_result("floor", a, nsubs, events, rate, target);
    r.update(json{{"record_bytes", record_bytes},
                  {"steps", a.str("steps", "")},
                  {"bytes", totals.bytes},
                  // Bytes per line as sent (the hello is not counted): the record's length with
                  // --steps record, record_bytes otherwise.
                  {"record_bytes_sent", totals.bytes / std::max<uint64_t>(totals.records, 1)},
                  {"complete", complete},
                  {"records", totals.records},
                  {"missing", totals.missing + totals.lost_records},
                  {"reader_busy",
                   totals.reader_wall_s > 0 ? totals.reader_cpu_s / totals.reader_wall_s : 0}});
    samples.summarize(r);
    add_cpu(r, run.cpu, events);
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
