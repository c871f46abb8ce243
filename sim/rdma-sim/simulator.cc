#include "simulator.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/protocol.h"
#include "throw_errno.h"

namespace rdmasim {

using nlohmann::json;

namespace {

constexpr size_t kMaxRequest = 1 << 20;  // a control request is a few hundred bytes
constexpr size_t kMaxControlConnections =
    1024;  // pending control connections (contexts are separate)

UniqueFd lock_directory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::system_error(ec, "cannot create fabric directory " + dir);
  const std::string path = dir + "/lock";
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) throw_errno("cannot open " + path);
  if (!try_lock_fd(fd.get())) {
    std::string pid;
    if (FILE* f = std::fopen((dir + "/pid").c_str(), "r")) {
      char buf[32] = {};
      if (std::fgets(buf, sizeof buf, f))
        pid = std::string(" (pid ") + std::strtok(buf, "\n") + ")";
      std::fclose(f);
    }
    throw std::runtime_error("a simulator is already running in " + dir + pid);
  }
  return fd;
}

UniqueFd listen_on(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("fabric directory path too long for a unix socket: " + path +
                             " (at most " + std::to_string(sizeof addr.sun_path - 1) +
                             " characters)");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw_errno("socket");
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw_errno("cannot bind " + path);
  chmod(path.c_str(), 0666);  // like the uverbs char devices: any user may open a context
  if (listen(fd.get(), 128) != 0) throw_errno("listen");
  return fd;
}

int64_t clock_ms(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

UniqueFd block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  UniqueFd fd(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd) throw_errno("signalfd");
  return fd;
}

}  // namespace

struct Simulator::Connection {
  UniqueFd fd;
  IoWatch watch;
  std::string in;
  std::string out;
  bool got_request = false;
};

Simulator::Simulator(const SimulatorOptions& options, Topology topology)
    : dir_(options.dir),
      kernel_(topology.kernel),
      dir_lock_(lock_directory(options.dir)),
      shm_(ShmRegion::create(options.dir + "/" + kStateFile)),
      sysfs_(options.dir + "/" + kSysDir),
      hotplug_(options.udev ? std::make_unique<UdevEmitter>()
                            : std::make_unique<HotplugObserver>()),
      udev_(options.udev ? static_cast<const UdevEmitter*>(hotplug_.get()) : nullptr),
      devlink_([] { return clock_ms(CLOCK_MONOTONIC); }, [] { return realtime_ns(); },
               [this](const DevlinkFill& f) {
                 if (devlink_socket_) devlink_socket_->notify(f);
               }),
      channels_(loop_, shm_.fabric()),
      contexts_(
          loop_, shm_.fabric(),
          [this](uint64_t id, int32_t index) { on_context_closed(id, index); },
          [this](const ContextView& c, const std::string& line, UniqueFd fd) {
            return on_context_request(c, line, std::move(fd));
          }) {
  if (FILE* f = std::fopen((dir_ + "/pid").c_str(), "w")) {
    std::fprintf(f, "%d\n", static_cast<int>(getpid()));
    std::fclose(f);
  }
  store_relaxed(shm_.fabric().header.query_latency_us, options.query_latency_us);
  store_relaxed(shm_.fabric().header.no_rdma, options.no_rdma ? 1u : 0u);
  sysfs_.reset();
  hotplug_fanout_.add(hotplug_.get());
  hotplug_fanout_.add(&devlink_);
  devlink_.set_kernel(topology.kernel);
  devlink_.on_objects([this](const DevlinkObject& o) {
    if (devlink_socket_) devlink_socket_->notify(o);
  });
  const std::vector<DevlinkInstanceSpec> unmapped = std::move(topology.devlink_instances);
  const bool pad_u64 = topology.devlink_u64_padding;
  fabric_ = std::make_unique<Fabric>(std::move(topology), shm_, sysfs_, contexts_, channels_,
                                     hotplug_fanout_);
  // Instances with no RDMA device register after the devices' (their drivers probe later).
  for (const DevlinkInstanceSpec& i : unmapped)
    devlink_.add_instance(i.bus, i.device, i.reporters);
  ethtool_ = std::make_unique<EthtoolFamily>(*fabric_);
  devlink_socket_ = std::make_unique<DevlinkStandIn>(loop_, dir_ + "/" + kDevlinkSocketFile,
                                                     devlink_, pad_u64, *ethtool_);
  // The topology's devices registered before anyone could listen: the monitor starts after them.
  rdma_netlink_ = std::make_unique<RdmaNetlinkStandIn>(loop_, dir_ + "/" + kRdmaNetlinkSocketFile,
                                                       options.rdma_netlink);
  hotplug_fanout_.add(rdma_netlink_.get());
  signal_fd_ = block_signals();
  signal_watch_ = IoWatch(&loop_, signal_fd_.get(), EPOLLIN, [this](uint32_t) {
    signalfd_siginfo si;
    while (read(signal_fd_.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si))
      stopping_ = true;
  });
  // Listening last: once a client can connect, everything it may look at exists.
  listen_fd_ = listen_on(dir_ + "/" + kSocketFile);
  listen_watch_ =
      IoWatch(&loop_, listen_fd_.get(), EPOLLIN, [this](uint32_t) { accept_connections(); });
}

Simulator::~Simulator() {
  // Clients' queries fail from now on; their async fds see EOF once the pipes close with us.
  shm_.mark_stopped();
  unlink((dir_ + "/" + kSocketFile).c_str());
  unlink((dir_ + "/" + kStateFile).c_str());
  unlink((dir_ + "/pid").c_str());
  try {
    sysfs_.remove_all();
  } catch (const std::exception&) {
    // Nothing left to do about it: the next start resets the tree.
  }
}

void Simulator::run() {
  while (!stopping_) {
    loop_.run_once(next_timeout_ms());
    contexts_.reap();
    channels_.reap();
    check_waiters();
    contexts_.flush();
    channels_.flush();
    reap_connections();
    devlink_socket_->reap();
    rdma_netlink_->reap();
  }
}

int Simulator::next_timeout_ms() const {
  if (waiters_.empty()) return -1;
  auto next = waiters_.front().deadline;
  for (const Waiter& w : waiters_)
    next = std::min(next, w.deadline);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(next - std::chrono::steady_clock::now())
          .count();
  return ms < 0 ? 0 : static_cast<int>(ms + 1);
}

void Simulator::accept_connections() {
  while (true) {
    const int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error: try again on the next wakeup
    if (connections_.size() >= kMaxControlConnections) {
      close(fd);
      continue;
    }
    const uint64_t id = next_connection_++;
    auto c = std::make_unique<Connection>();
    c->fd.reset(fd);
    c->watch = IoWatch(&loop_, fd, EPOLLIN | EPOLLRDHUP, [this, id](uint32_t ev) {
      if (ev & EPOLLOUT) flush_connection(id);
      if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(id);
    });
    connections_.emplace(id, std::move(c));
  }
}

void Simulator::on_readable(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  char buf[4096];
  while (true) {
    const ssize_t n = read(c.fd.get(), buf, sizeof buf);
    if (n > 0) {
      if (c.got_request) continue;  // one request per connection: ignore the rest
      c.in.append(buf, static_cast<size_t>(n));
      const size_t nl = c.in.find('\n');
      if (nl != std::string::npos) {
        c.got_request = true;
        const std::string line = c.in.substr(0, nl);
        c.in.clear();
        on_line(id, line);
        if (!connections_.count(id)) return;  // handed over to a context
      } else if (c.in.size() > kMaxRequest) {
        close_connection(id);
        return;
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    // EOF or error: the client went away (a waiter's reply has nowhere to go).
    close_connection(id);
    return;
  }
}

void Simulator::on_line(uint64_t id, const std::string& line) {
  if (line.rfind(kOpenVerb, 0) == 0) {
    open_context(id, line);
    return;
  }
  json request;
  try {
    request = json::parse(line);
  } catch (const json::exception&) {
    send_reply(id, {{"ok", false}, {"error", "malformed request (not JSON)"}});
    return;
  }
  std::optional<json> reply;
  try {
    reply = handle(id, request);
  } catch (const CommandError& e) {
    reply = json{{"ok", false}, {"error", e.what()}};
  } catch (const json::exception& e) {
    reply = json{{"ok", false}, {"error", std::string("malformed request: ") + e.what()}};
  } catch (const std::exception& e) {
    reply = json{{"ok", false}, {"error", std::string("internal error: ") + e.what()}};
  }
  // Events queued by the command go out before the CLI hears back.
  contexts_.flush();
  channels_.flush();
  if (reply) send_reply(id, *reply);
}

void Simulator::open_context(uint64_t id, const std::string& line) {
  auto node = connections_.extract(id);
  UniqueFd fd = std::move(node.mapped()->fd);
  node.mapped()->watch = IoWatch();
  int index = -1, pid = 0, devx_mode = kDevxNone;
  if (std::sscanf(line.c_str(), "OPEN %d %d %d", &index, &pid, &devx_mode) < 2) {
    ContextRegistry::refuse(std::move(fd), EINVAL);
    return;
  }
  // Only a registered, working device can be opened: after an unplug its char device is gone,
  // and a device in fatal state cannot create a user context.
  const DeviceEntry* e = fabric_->find_index(index);
  if (!e || e->state != DeviceState::kLive) {
    ContextRegistry::refuse(std::move(fd), EIO);
    return;
  }
  int err = 0;
  const uint32_t uid = assign_devx_uid(*e, devx_mode, &err);
  if (err) {
    ContextRegistry::refuse(std::move(fd), err);
    return;
  }
  contexts_.open(std::move(fd), index, e->model.name, pid, uid);
}

// What mlx5_ib_alloc_ucontext does with MLX5_IB_ALLOC_UCTX_DEVX: mlx5_ib_devx_create() makes the
// context a DEVX one with its own UCTX object, or fails: EINVAL when the firmware has no UCTX
// (log_max_uctx 0); and, as the simulator models it, ENOMEM (status LIM_ERR) when the firmware's
// 2^log_max_uctx UCTX objects are taken, one of which the driver keeps for itself (the
// whitelist uid of devx.c). rdma-core's provider then retries without DEVX unless the program
// asked for it (mlx5dv_open_device with MLX5DV_CONTEXT_FLAGS_DEVX).
uint32_t Simulator::assign_devx_uid(const DeviceEntry& e, int mode, int* err) {
  *err = 0;
  if (mode == kDevxNone) return 0;
  const DevxModel& d = e.model.devx;
  if (!d.is_mlx5()) {
    *err = mode == kDevxRequire ? EOPNOTSUPP : 0;
    return 0;
  }
  const uint64_t uctx_max = uint64_t{1} << d.log_max_uctx;
  if (d.has_devx() && contexts_.devx_count(e.index) + 1 < uctx_max) {
    const uint32_t uid = next_devx_uid_;
    next_devx_uid_ = next_devx_uid_ == 0xffff ? 1 : next_devx_uid_ + 1;  // 16-bit, never 0
    return uid;
  }
  if (mode == kDevxRequire) *err = d.has_devx() ? ENOMEM : EINVAL;
  return 0;
}

void Simulator::send_reply(uint64_t id, const json& reply) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  it->second->out = reply.dump() + "\n";
  flush_connection(id);
}

void Simulator::flush_connection(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  while (!c.out.empty()) {
    const ssize_t n = send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      c.watch.set_events(EPOLLIN | EPOLLRDHUP | EPOLLOUT);
      return;
    }
    if (n <= 0) {
      c.out.clear();
      break;
    }
    c.out.erase(0, static_cast<size_t>(n));
  }
  close_connection(id);
}

void Simulator::close_connection(uint64_t id) {
  to_close_.push_back(id);
}

void Simulator::reap_connections() {
  for (uint64_t id : to_close_)
    connections_.erase(id);
  to_close_.clear();
}

void Simulator::on_context_closed(uint64_t context_id, int32_t device_index) {
  // Closing a context destroys its DEVX objects; a channel's fd stays open until its owner closes
  // it, and reads nothing more.
  channels_.destroy_context(context_id);
  if (auto removed = fabric_->context_closed(device_index)) {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->device == *removed) {
        json reply = it->reply;
        reply["message"] = reply["message"].get<std::string>() + "; removal complete";
        reply["removal_pending"] = false;
        send_reply(it->connection, reply);
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void Simulator::check_waiters() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (!connections_.count(it->connection)) {
      it = waiters_.erase(it);  // the CLI gave up
    } else if (now >= it->deadline) {
      const DeviceEntry* e = fabric_->find(it->device);
      const size_t open = e ? contexts_.open_count(e->index) : 0;
      std::string pids;
      for (int pid : e ? contexts_.open_pids(e->index) : std::vector<int>{})
        pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
      send_reply(it->connection,
                 {{"ok", false},
                  {"error", "removal of " + it->device + " still pending: " + std::to_string(open) +
                                " context(s) open (pids " + pids + ")"},
                  {"removal_pending", true}});
      it = waiters_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace rdmasim
