#include "app/devlink_monitor.h"

#include <linux/netlink.h>
#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rdma_eventd::daemon {
namespace {

using devlink::Message;
using devlink::MessageKind;
using devlink::Reporter;

// Big enough for any datagram the kernel sends on a generic-netlink socket (a dump's part is
// at most 32 KiB; notifications a few hundred bytes).
constexpr size_t kBufferSize = 64 * 1024;
// At start the controller answers within the send (the kernel runs the request in the
// sender's call); this bounds the wait if it ever does not.
constexpr int kFamilyWaitMs = 1000;

std::string key_of(const Reporter& r) {
  return r.handle() + '\x1f' + std::to_string(r.port_index) + '\x1f' + r.name;
}

std::string port_key(const std::string& handle, int64_t index) {
  return handle + '\x1f' + std::to_string(index);
}

std::string state_name(int state) {
  if (state == devlink::kStateHealthy) return "healthy";
  if (state == devlink::kStateError) return "error";
  return "unknown";
}

// What changed between what the daemon knew (`before`, null when nothing) and `now`; "" for
// nothing worth a record.
std::string change_of(const Reporter* before, const Reporter& now, bool dumped) {
  const bool error = now.state == devlink::kStateError;
  const bool healthy = now.state == devlink::kStateHealthy;
  if (!before) {
    if (error) return dumped ? "found_in_error" : "error";
    return healthy && !dumped ? "recovered" : "";
  }
  const bool errors_grew = now.error_count != before->error_count;
  const bool recoveries_grew = now.recover_count != before->recover_count;
  if (before->state == devlink::kStateError) {
    if (healthy) return "recovered";
    return error && errors_grew ? "error_again" : "";
  }
  if (error) return "error";
  // Healthy before and now with counts moved: a report and its recovery both lost (an overrun)
  // or read as one.
  return healthy && (errors_grew || recoveries_grew) ? "recovered" : "";
}

// The event of a reporter as the daemon knows it, with `change` (counts grown: none).
DevlinkHealthEvent event_of(const Reporter& r, std::string state, std::string change) {
  DevlinkHealthEvent e;
  e.handle = r.handle();
  e.port_index = r.port_index;
  e.reporter = r.name;
  e.state = std::move(state);
  e.previous_state = state_name(r.state);
  e.change = std::move(change);
  e.error_count = r.error_count;
  e.recover_count = r.recover_count;
  e.grace_period_ms = r.grace_period_ms;
  e.auto_recover = r.auto_recover;
  return e;
}

uint64_t growth(uint64_t now, uint64_t before) {
  return now >= before ? now - before : now;
}

}  // namespace

DevlinkMonitor::DevlinkMonitor(EventLoop& loop, const Clock& clock, DevlinkConfig config,
                               Handles handles, Publish publish, Confirm confirm,
                               std::string stand_in)
    : loop_(loop),
      clock_(clock),
      config_(std::move(config)),
      handles_(std::move(handles)),
      publish_(std::move(publish)),
      confirm_(std::move(confirm)),
      stand_in_(std::move(stand_in)) {}

DevlinkMonitor::~DevlinkMonitor() = default;

void DevlinkMonitor::fail(const std::string& why) {
  unavailable_ = why;
  watch_.reset();
  socket_.close();
  dump_watch_.reset();
  dump_socket_.close();
  spdlog::warn("devlink health: {}; adapter health reporters are not followed", why);
}

void DevlinkMonitor::start() {
  if (started_ || !config_.enabled) return;
  started_ = true;
  buf_.resize(kBufferSize);
  if (const int err = socket_.open(NETLINK_GENERIC, stand_in_)) {
    fail((stand_in_.empty() ? std::string("cannot open a generic netlink socket: ")
                            : "cannot connect to " + stand_in_ + ": ") +
         std::strerror(err));
    return;
  }
  if (const int err = socket_.send(devlink::family_request(1))) {
    fail(std::string("cannot ask the kernel for the devlink family: ") + std::strerror(err));
    return;
  }
  pollfd p{socket_.fd(), POLLIN, 0};
  if (::poll(&p, 1, kFamilyWaitMs) != 1) {
    fail("the kernel did not answer the question for the devlink family");
    return;
  }
  size_t size = 0;
  bool from_kernel = false;
  if (const int err = socket_.receive(buf_, &size, &from_kernel)) {
    fail(std::string("cannot read the kernel's answer for the devlink family: ") +
         std::strerror(err));
    return;
  }
  std::vector<Message> messages;
  devlink::decode(std::span(buf_.data(), size), 0, messages);
  for (const Message& m : messages) {
    if (m.kind == MessageKind::kError && m.error == ENOENT) {
      // A kernel built without devlink: nothing is wrong, there is just nothing to follow.
      unavailable_ = "the kernel has no devlink family";
      socket_.close();
      spdlog::info("devlink health: {}; adapter health reporters are not followed", unavailable_);
      return;
    }
    if (m.kind == MessageKind::kError) {
      fail(std::string("the kernel refused the question for the devlink family: ") +
           std::strerror(m.error));
      return;
    }
    if (m.kind == MessageKind::kFamily && from_kernel) family_ = m.family;
  }
  if (family_.id == 0) {
    fail("the kernel's answer for the devlink family was not one");
    return;
  }
  if (family_.config_group == 0) {
    fail("the devlink family has no \"config\" group");
    return;
  }
  if (const int err = socket_.join(family_.config_group)) {
    fail(std::string("cannot join the devlink family's config group: ") + std::strerror(err));
    return;
  }
  watch_ = std::make_unique<IoWatch>(loop_, socket_.fd(), Priority::kSources,
                                     [this](bool, bool) { on_readable(); });
  watch_->watch(true, false);
  spdlog::info("devlink health: following family {} group {}", family_.id, family_.config_group);
  start_dump();
}

void DevlinkMonitor::set_config(DevlinkConfig config) {
  const bool was = config_.enabled;
  config_ = std::move(config);
  if (!was && config_.enabled && !started_) start();
  if (was && !config_.enabled && started_) {
    // Off: the sockets go, after this callback; what was known is forgotten.
    loop_.defer([this] {
      if (config_.enabled) return;  // turned on again meanwhile: it goes on
      watch_.reset();
      socket_.close();
      dump_watch_.reset();
      dump_socket_.close();
      known_.clear();
      ports_.clear();
      dumped_counts_.clear();
      guards_armed_ = false;
      started_ = false;
      unavailable_.clear();
      family_ = {};
    });
  }
}

bool DevlinkMonitor::drop(const Message& m, bool from_kernel) {
  const bool bad =
      m.kind == MessageKind::kMalformed || (!from_kernel && m.kind != MessageKind::kIgnored);
  if (!bad) return false;
  ++stats_.malformed;
  if (!logged_malformed_) {
    logged_malformed_ = true;
    spdlog::warn("devlink health: dropped a message ({}); further ones are only counted",
                 from_kernel ? m.problem : "not from the kernel");
  }
  return true;
}

bool DevlinkMonitor::older_than_dump(const Reporter& r) {
  const auto g = dumped_counts_.find(key_of(r));
  if (g == dumped_counts_.end()) return false;
  const auto [errors, recoveries] = g->second;
  if (r.error_count < errors || (r.error_count == errors && r.recover_count < recoveries)) {
    spdlog::debug(
        "devlink health: {} reporter {}: a notification from before the dump "
        "(errors {}, recoveries {}; the dump said {}, {}), dropped",
        r.handle(), r.name, r.error_count, r.recover_count, errors, recoveries);
    return true;
  }
  dumped_counts_.erase(g);  // newer than the dump: so is everything after it
  return false;
}

void DevlinkMonitor::on_readable() {
  std::vector<Record> out;
  std::vector<Message> messages;
  // A dump ended before this read began: what waits in the socket now is all it can be older
  // than, so once it is read, the guards go.
  const bool clears_guards = guards_armed_;
  for (int i = 0; i < kDatagramsPerTurn && watch_; ++i) {
    size_t size = 0;
    bool from_kernel = false;
    const int err = socket_.receive(buf_, &size, &from_kernel);
    if (err == EAGAIN || err == EWOULDBLOCK) {
      if (clears_guards) {
        dumped_counts_.clear();
        guards_armed_ = false;
      }
      break;
    }
    if (err == EINTR) continue;
    if (err == ENOBUFS) {
      lost(out);
      continue;
    }
    if (err == EMSGSIZE) {  // one datagram too long for any notification: dropped
      ++stats_.malformed;
      continue;
    }
    if (err) {
      // The socket is broken (a stand-in gone): given up, after this callback, not spun on.
      watch_->watch(false, false);
      loop_.defer([this, err] {
        fail(std::string("reading notifications failed: ") + std::strerror(err));
      });
      break;
    }
    messages.clear();
    devlink::decode(std::span(buf_.data(), size), family_.id, messages);
    for (const Message& m : messages) {
      if (drop(m, from_kernel)) continue;
      if (m.kind == MessageKind::kInstance) on_instance(m.instance, out);
      if (m.kind == MessageKind::kPort) on_port(m.port);
      if (m.kind != MessageKind::kReporter) continue;
      ++stats_.notifications;
      if (older_than_dump(m.reporter)) continue;
      apply(m.reporter, false, out);
    }
  }
  if (!out.empty()) publish_(out);
}

void DevlinkMonitor::lost(std::vector<Record>& out) {
  ++stats_.overruns;
  spdlog::warn("devlink health: notifications lost (socket overrun); reading every reporter again");
  Record r;
  r.event = EventKind::kDevlinkEventsLost;
  out.push_back(std::move(r));
  if (dump_watch_)
    dump_again_ = true;
  else
    start_dump();
}

void DevlinkMonitor::devices_changed() {
  if (!watch_) return;  // not started, off, or without devlink
  if (dump_watch_)
    dump_again_ = true;
  else
    start_dump();
}

// A dump reads the devlink ports first (so that the reporters it then reads map through their
// ports' netdevs), then the reporters, on one socket of its own.
void DevlinkMonitor::start_dump() {
  if (const int err = dump_socket_.open(NETLINK_GENERIC, stand_in_)) {
    spdlog::warn("devlink health: cannot open a socket for the reporters' dump: {}",
                 std::strerror(err));
    return;
  }
  dump_stage_ = DumpStage::kPorts;
  ++dump_generation_;
  if (!send_dump_request()) {
    dump_socket_.close();
    return;
  }
  dump_watch_ = std::make_unique<IoWatch>(loop_, dump_socket_.fd(), Priority::kSources,
                                          [this](bool, bool) { on_dump_readable(); });
  dump_watch_->watch(true, false);
}

bool DevlinkMonitor::send_dump_request() {
  // Odd, never the family request's 1, and a new number for each part: a late answer to an
  // earlier request is told apart.
  dump_seq_ = dump_seq_ == 0 ? static_cast<uint32_t>(clock_.now().mono_us) | 3 : dump_seq_ + 2;
  const std::vector<uint8_t> request = dump_stage_ == DumpStage::kPorts
                                           ? devlink::port_dump_request(family_.id, dump_seq_)
                                           : devlink::reporter_dump_request(family_.id, dump_seq_);
  if (const int err = dump_socket_.send(request)) {
    spdlog::warn("devlink health: cannot ask for the {} dump: {}",
                 dump_stage_ == DumpStage::kPorts ? "ports'" : "reporters'", std::strerror(err));
    return false;
  }
  return true;
}

void DevlinkMonitor::on_dump_readable() {
  std::vector<Record> out;
  std::vector<Message> messages;
  bool done = false;
  bool complete = false;  // every reporter read: what it did not list is gone
  for (int i = 0; i < kDatagramsPerTurn && !done; ++i) {
    size_t size = 0;
    bool from_kernel = false;
    const int err = dump_socket_.receive(buf_, &size, &from_kernel);
    if (err == EAGAIN || err == EWOULDBLOCK) break;
    if (err == EINTR) continue;
    if (err) {
      spdlog::warn("devlink health: reading the devlink dump failed: {}", std::strerror(err));
      done = true;
      dump_again_ = dump_again_ || err == ENOBUFS;
      dump_stage_ = DumpStage::kReporters;  // ends here; the next dump reads it all again
      break;
    }
    messages.clear();
    devlink::decode(std::span(buf_.data(), size), family_.id, messages);
    for (const Message& m : messages) {
      if (drop(m, from_kernel)) continue;
      if (m.seq != dump_seq_) continue;  // an earlier dump's
      if (m.kind == MessageKind::kDone) {
        done = true;
        complete = dump_stage_ == DumpStage::kReporters;
      }
      if (m.kind == MessageKind::kError && m.error != 0) {
        // A kernel with no port dump still has reporters: an error ends only that part.
        spdlog::warn("devlink health: the kernel refused the {} dump: {}",
                     dump_stage_ == DumpStage::kPorts ? "ports'" : "reporters'",
                     std::strerror(m.error));
        done = true;
      }
      if (m.kind == MessageKind::kPort && dump_stage_ == DumpStage::kPorts) on_port(m.port);
      if (m.kind == MessageKind::kReporter && dump_stage_ == DumpStage::kReporters) {
        dumped_counts_[key_of(m.reporter)] = {m.reporter.error_count, m.reporter.recover_count};
        guards_armed_ = false;  // until this dump ends
        apply(m.reporter, true, out);
      }
    }
    if (done && dump_stage_ == DumpStage::kPorts) {
      dump_stage_ = DumpStage::kReporters;
      // A request that cannot be sent ends the dump as a failed one (the watch goes after
      // this callback, as every end of a dump).
      done = !send_dump_request();
    }
  }
  if (complete) {
    forget_unlisted(out);
    remap(out);
  }
  if (!out.empty()) publish_(out);
  if (complete) confirm_(in_error());
  if (done) {
    ++stats_.dumps;
    // Nothing waits in the notification socket: nothing can be older than the dump.
    guards_armed_ = socket_.readable();
    if (!guards_armed_) dumped_counts_.clear();
    // Not inside its own callback: the watch and its socket go after it returns.
    loop_.defer([this] { end_dump(); });
    dump_watch_->watch(false, false);
  }
}

void DevlinkMonitor::forget_unlisted(std::vector<Record>& out) {
  for (auto it = known_.begin(); it != known_.end();) {
    auto next = std::next(it);
    if (it->second.generation != dump_generation_) forget(it, out);
    it = next;
  }
}

void DevlinkMonitor::on_instance(const devlink::Instance& i, std::vector<Record>& out) {
  const std::string handle = i.handle();
  spdlog::info("devlink health: instance {} {}", handle, i.added ? "registered" : "unregistered");
  if (!i.added) {
    // Its reporters and ports went with it, with no message of their own.
    for (auto it = known_.begin(); it != known_.end();) {
      auto next = std::next(it);
      if (it->second.reporter.handle() == handle) forget(it, out);
      it = next;
    }
    std::erase_if(ports_, [&](const auto& e) {
      return e.first.compare(0, handle.size() + 1, handle + '\x1f') == 0;
    });
    return;
  }
  // A new instance's driver creates its reporters (a reload's fresh ones): read them.
  devices_changed();
}

void DevlinkMonitor::on_port(const devlink::Port& p) {
  const std::string key = port_key(p.handle(), p.index);
  if (!p.added) {
    ports_.erase(key);
    return;
  }
  if (ports_.size() >= kMaxPorts && !ports_.count(key)) return;
  ports_[key] = p.netdev;
}

std::vector<DevlinkTarget> DevlinkMonitor::targets_of(const std::string& handle,
                                                      int64_t port_index) const {
  return devlink_targets(handles_(), handle, port_index, port_netdev(handle, port_index));
}

std::vector<DevlinkInError> DevlinkMonitor::in_error() const {
  std::vector<DevlinkInError> out;
  for (const auto& [key, k] : known_) {
    const Reporter& r = k.reporter;
    if (r.state != devlink::kStateError) continue;
    for (const DevlinkTarget& t : targets_of(r.handle(), r.port_index))
      out.push_back({t.device, t.port, r.name, r.auto_recover});
  }
  return out;
}

std::string DevlinkMonitor::port_netdev(const std::string& handle, int64_t port_index) const {
  if (port_index < 0) return {};
  const auto it = ports_.find(port_key(handle, port_index));
  return it == ports_.end() ? std::string() : it->second;
}

void DevlinkMonitor::forget(std::map<std::string, Known>::iterator it, std::vector<Record>& out) {
  const Reporter& r = it->second.reporter;
  if (r.state == devlink::kStateError) {
    // What it held goes with it: its driver unloaded or recreated it.
    const DevlinkHealthEvent e = event_of(r, "removed", "removed");
    emit(e, out);
    spdlog::info("devlink health: {} reporter {}{}: removed while in error", e.handle, e.reporter,
                 e.port_index >= 0 ? " port " + std::to_string(e.port_index) : "");
  }
  dumped_counts_.erase(it->first);
  known_.erase(it);
}

void DevlinkMonitor::end_dump() {
  dump_watch_.reset();
  dump_socket_.close();
  if (dump_again_ && watch_) {
    dump_again_ = false;
    start_dump();
  }
}

void DevlinkMonitor::apply(const Reporter& r, bool dumped, std::vector<Record>& out) {
  const std::string key = key_of(r);
  auto it = known_.find(key);
  const Reporter* before = it == known_.end() ? nullptr : &it->second.reporter;
  if (!before && known_.size() >= kMaxReporters) return;
  std::string change = change_of(before, r, dumped);
  const Instant now = clock_.now();
  // A report within the grace period of the reporter's last recovery: the kernel cancels the
  // recovery (devlink_health_report: -ECANCELED), and mlx5's fw_fatal then unloads the driver.
  if (change == "error" && before && r.auto_recover && r.grace_period_ms > 0 &&
      it->second.recovered_mono_us > 0 &&
      now.mono_us - it->second.recovered_mono_us < static_cast<int64_t>(r.grace_period_ms) * 1000)
    change = "recovery_refused";
  DevlinkHealthEvent e = event_of(r, state_name(r.state), change);
  e.previous_state = before ? state_name(before->state) : "";
  e.new_errors = before ? growth(r.error_count, before->error_count) : 0;
  e.new_recoveries = before ? growth(r.recover_count, before->recover_count) : 0;
  if (it == known_.end()) it = known_.emplace(key, Known{}).first;
  const bool state_changed = !before || before->state != r.state;
  it->second.reporter = r;
  it->second.generation = dump_generation_;
  if (state_changed || !change.empty()) it->second.since_us = now.wall_us;
  if (change == "recovered") it->second.recovered_mono_us = now.mono_us;
  if (change.empty()) return;
  it->second.targets = emit(e, out);
  // A reporter that stays in error and reports again (a driver repeating its error) is logged
  // at debug: its records are in the journal, under the journal budget; a log line per report
  // would not be.
  spdlog::log(change == "error_again" ? spdlog::level::debug : spdlog::level::info,
              "devlink health: {} reporter {}{}: {} (errors {}, recoveries {})", e.handle,
              e.reporter, e.port_index >= 0 ? " port " + std::to_string(e.port_index) : "",
              change == "recovery_refused" ? "recovery refused within the grace period (" +
                                                 std::to_string(e.grace_period_ms) + " ms)"
                                           : change,
              e.error_count, e.recover_count);
}

std::vector<DevlinkTarget> DevlinkMonitor::emit(const DevlinkHealthEvent& e,
                                                std::vector<Record>& out,
                                                const std::vector<DevlinkTarget>* only) {
  std::vector<DevlinkTarget> targets = only ? *only : targets_of(e.handle, e.port_index);
  if (targets.empty() && !config_.unmapped) return targets;
  std::vector<DevlinkTarget> to = targets;
  if (to.empty()) to.push_back({});
  for (const DevlinkTarget& t : to) {
    Record rec;
    rec.event = EventKind::kDevlinkHealth;
    rec.device = t.device;
    rec.node_guid = t.node_guid;
    rec.port = t.port;
    rec.devlink = e;
    out.push_back(std::move(rec));
    ++stats_.records;
  }
  return targets;
}

void DevlinkMonitor::remap(std::vector<Record>& out) {
  for (auto& [key, k] : known_) {
    const Reporter& r = k.reporter;
    if (r.state != devlink::kStateError) continue;
    const std::vector<DevlinkTarget> now = targets_of(r.handle(), r.port_index);
    std::vector<DevlinkTarget> fresh;
    for (const DevlinkTarget& t : now)
      if (std::find(k.targets.begin(), k.targets.end(), t) == k.targets.end()) fresh.push_back(t);
    k.targets = now;
    if (fresh.empty()) continue;
    emit(event_of(r, state_name(r.state), "found_in_error"), out, &fresh);
  }
}

StatusReply::Devlink DevlinkMonitor::status() const {
  StatusReply::Devlink s;
  s.enabled = config_.enabled;
  s.available = started_ && unavailable_.empty() && watch_ != nullptr;
  s.unavailable = unavailable_;
  s.notifications = stats_.notifications;
  s.dumps = stats_.dumps;
  s.overruns = stats_.overruns;
  s.malformed = stats_.malformed;
  s.records = stats_.records;
  static const std::vector<DevlinkHandles> kNone;
  const std::vector<DevlinkHandles>& devices = known_.empty() ? kNone : handles_();
  for (const auto& [key, k] : known_) {
    StatusReply::DevlinkReporter r;
    r.handle = k.reporter.handle();
    r.port_index = k.reporter.port_index;
    r.reporter = k.reporter.name;
    r.state = state_name(k.reporter.state);
    r.error_count = k.reporter.error_count;
    r.recover_count = k.reporter.recover_count;
    r.since_us = k.since_us;
    for (const DevlinkTarget& t :
         devlink_targets(devices, r.handle, r.port_index, port_netdev(r.handle, r.port_index)))
      r.ports.push_back(t.port == 0 ? t.device : t.device + "/" + std::to_string(t.port));
    s.reporters.push_back(std::move(r));
  }
  for (const auto& [key, netdev] : ports_) {
    const size_t sep = key.find('\x1f');
    StatusReply::DevlinkPort p;
    p.handle = key.substr(0, sep);
    p.index = std::strtoll(key.c_str() + sep + 1, nullptr, 10);
    p.netdev = netdev;
    s.devlink_ports.push_back(std::move(p));
  }
  return s;
}

}  // namespace rdma_eventd::daemon
