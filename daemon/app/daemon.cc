#include "app/daemon.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "core/enricher.h"
#include "hub/hub.h"
#include "rdma_eventd/version.h"
#include "systemd/journal_sink.h"
#include "systemd/service_manager.h"

namespace rdma_eventd::daemon {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

int64_t now_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

std::string_view what_name(QueryFailure::What w) {
  switch (w) {
    case QueryFailure::What::kPort:
      return "port attributes";
    case QueryFailure::What::kGids:
      return "GID table";
    case QueryFailure::What::kPkeys:
      return "P_Key table";
  }
  return "?";
}

// --print-records: one JSON line per record on stdout. Blocking by nature: meant for the
// foreground demo and debugging; consumers use the journal or the subscriber socket.
class StdoutSink final : public RecordSink {
 public:
  void publish(const Record&, const std::string& json) override {
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
  }
  void flush() override { std::fflush(stdout); }
};

}  // namespace

Daemon::Daemon(Options options, Config config)
    : options_(std::move(options)),
      config_(std::move(config)),
      stamper_(new_stream_id(), host_name(), config_.severities) {
  batch_.reserve(kMaxBatch);
}

Daemon::~Daemon() {
  devices_.clear();  // watches and contexts before the loop
  signals_.clear();
}

void Daemon::start() {
  if (loop_.backend() != "epoll") {
    throw std::runtime_error("libevent chose the '" + loop_.backend() + "' backend, not epoll");
  }
  std::signal(SIGPIPE, SIG_IGN);
  setup_service();
  signals_.push_back(std::make_unique<SignalWatch>(loop_, SIGTERM, [this] {
    spdlog::info("SIGTERM: stopping");
    loop_.stop();
  }));
  signals_.push_back(std::make_unique<SignalWatch>(loop_, SIGINT, [this] {
    spdlog::info("SIGINT: stopping");
    loop_.stop();
  }));
  signals_.push_back(std::make_unique<SignalWatch>(loop_, SIGHUP, [this] {
    service_->reloading();
    reload();
    service_->ready(service_status());
  }));
  signals_.push_back(std::make_unique<SignalWatch>(loop_, SIGUSR1, [this] {
    spdlog::info("SIGUSR1: rescanning RDMA devices");
    rescan();
  }));
  if (options_.print_records) stdout_sink_ = std::make_unique<StdoutSink>();
  setup_journal();
  setup_hub();
  spdlog::info("rdma-eventd {} started: stream {}, host {}, journal {}", kVersion,
               stamper_.stream(), stamper_.host(), journal_ ? "on" : "off");
  rescan();
  spdlog::info("ready: watching {} device{}", devices_.size(), devices_.size() == 1 ? "" : "s");
  service_->ready(service_status());
}

int Daemon::run() {
  const int rc = loop_.run();
  service_->stopping();
  spdlog::info("stopped after {} records ({} events read and acked)", counters_.records,
               counters_.events_acked);
  return rc == 0 ? 0 : 1;
}

void Daemon::setup_journal() {
  const bool want = config_.journal_enabled && !options_.no_journal;
  if (want && !journal_) {
    journal_ = std::make_unique<JournalSink>(config_.journal_identifier, 65536);
  } else if (!want && journal_) {
    journal_.reset();
  } else if (journal_) {
    journal_->set_identifier(config_.journal_identifier);
  }
}

void Daemon::rescan() {
  const int err = catalog_.scan();
  if (err != 0) {
    if (err != last_scan_error_) {
      if (err == ENOSYS) {
        spdlog::warn(
            "no RDMA support in the kernel (ENOSYS); waiting for devices "
            "(SIGUSR1 rescans)");
      } else {
        spdlog::error("cannot list RDMA devices: {}; waiting (SIGUSR1 rescans)",
                      std::strerror(err));
      }
      last_scan_error_ = err;
    }
    return;
  }
  // Devices no longer listed, or no longer selected after a reload, are closed.
  std::vector<int> gone;
  for (const auto& [index, dev] : devices_) {
    const auto& e = dev->context->entry();
    bool listed = false;
    for (const auto& d : catalog_.devices())
      listed = listed || d.index == index;
    if (!listed) {
      gone.push_back(index);
      spdlog::info("{}: no longer listed, closing it", e.name);
    } else if (!config_.devices.selects(e.name, e.node_guid)) {
      gone.push_back(index);
      spdlog::info("{}: excluded by the configuration now, closing it", e.name);
    }
  }
  for (int index : gone)
    devices_.erase(index);

  size_t selected = 0;
  for (const auto& e : catalog_.devices()) {
    if (!config_.devices.selects(e.name, e.node_guid)) {
      spdlog::debug("{}: left alone (not selected by devices.include/exclude)", e.name);
      continue;
    }
    ++selected;
    if (!devices_.contains(e.index)) open_device(e);
  }
  if (devices_.empty()) {
    const int code = catalog_.devices().empty() ? 0 : -2;
    if (code != last_scan_error_) {
      spdlog::warn(catalog_.devices().empty()
                       ? "no RDMA devices found; waiting for devices (SIGUSR1 rescans)"
                       : "no RDMA device is selected by the configuration; waiting");
      last_scan_error_ = code;
    }
  } else {
    last_scan_error_ = -1;
  }
  (void)selected;
  update_service_status();
}

void Daemon::open_device(const verbs::DeviceEntry& entry) {
  int err = 0;
  auto ctx = catalog_.open(entry, &err);
  if (!ctx) {
    spdlog::error("{}: cannot open: {}", entry.name, std::strerror(err));
    return;
  }
  auto dev = std::make_unique<WatchedDevice>();
  dev->view.name = entry.name;
  dev->view.node_guid = entry.node_guid;
  dev->query_error_logged.assign(3, false);
  const auto failures = load_view(*ctx, ctx->num_ports(), dev->view);
  dev->context = std::move(ctx);
  log_query_failures(*dev, failures);
  WatchedDevice* raw = dev.get();
  dev->watch = std::make_unique<IoWatch>(loop_, dev->context->async_fd(), Priority::kSources,
                                         [this, raw](bool, bool) { on_readable(*raw); });
  dev->watch->watch(true, false);
  spdlog::info("{}: watching (node GUID {}, {} port{}, async fd {})", entry.name,
               format_guid(entry.node_guid), dev->context->num_ports(),
               dev->context->num_ports() == 1 ? "" : "s", dev->context->async_fd());
  devices_[entry.index] = std::move(dev);
}

void Daemon::close_device_later(int index, std::string why) {
  auto it = devices_.find(index);
  if (it == devices_.end()) return;
  it->second->watch->watch(false, false);  // no more callbacks for it
  loop_.defer([this, index, why = std::move(why)] {
    auto it2 = devices_.find(index);
    if (it2 == devices_.end()) return;
    spdlog::info("{}: closing: {}", it2->second->view.name, why);
    devices_.erase(it2);
    update_service_status();
  });
}

void Daemon::on_readable(WatchedDevice& dev) {
  batch_.clear();
  int read_error = 0;
  bool failed = false;
  while (batch_.size() < kMaxBatch) {
    RawEvent ev;
    const auto r = dev.context->read_event(ev, &read_error);
    if (r == verbs::Context::ReadResult::kEmpty) break;
    if (r == verbs::Context::ReadResult::kError) {
      failed = true;
      break;
    }
    batch_.push_back(ev);
    ++counters_.events_read;
    ++counters_.events_acked;
  }
  if (!batch_.empty()) {
    ++counters_.batches;
    BatchOutcome out = enrich_batch(dev.view, batch_, *dev.context, stamper_, now_us());
    log_query_failures(dev, out.failures);
    publish(out.records);
    if (out.device_fatal) {
      close_device_later(dev.context->entry().index,
                         "DEVICE_FATAL; SIGUSR1 rescans and reopens it once it is usable");
    }
  }
  if (failed) {
    // The kernel's async fd never fails; if it does anyway, reading it again would spin.
    spdlog::error("{}: reading async events failed: {}", dev.view.name,
                  read_error ? std::strerror(read_error) : "end of the event stream");
    close_device_later(dev.context->entry().index, "its async event stream failed");
  }
}

void Daemon::publish(std::vector<Record>& records) {
  for (const Record& r : records) {
    const std::string json = to_json(r);
    if (journal_) journal_->publish(r, json);
    if (stdout_sink_) stdout_sink_->publish(r, json);
    if (hub_) hub_->publish(r, json);
    ++counters_.records;
  }
  if (stdout_sink_) stdout_sink_->flush();
  if (hub_) hub_->flush();
  update_service_status();  // port states
}

void Daemon::log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures) {
  for (const auto& f : failures) {
    ++counters_.query_failures;
    auto&& logged = dev.query_error_logged[static_cast<size_t>(f.what)];
    if (logged) continue;
    logged = true;
    spdlog::warn("{}: querying the {}{} failed: {}; records carry the last known state",
                 dev.view.name, what_name(f.what),
                 f.port ? " of port " + std::to_string(f.port) : std::string(),
                 std::strerror(f.error));
  }
}

void Daemon::reload() {
  spdlog::info("SIGHUP: reloading {}", options_.config_path);
  ConfigResult result =
      options_.config_path_given || access(options_.config_path.c_str(), F_OK) == 0
          ? load_config(options_.config_path)
          : ConfigResult(Config{});
  if (auto* err = std::get_if<ConfigError>(&result)) {
    spdlog::error("reload failed, keeping the running configuration: {}", err->message());
    return;
  }
  apply_config(std::get<Config>(result));
  spdlog::info("configuration reloaded");
}

void Daemon::apply_config(const Config& next) {
  config_ = next;
  if (!options_.log_level) spdlog::set_level(spdlog::level::from_str(config_.log_level));
  stamper_.set_severities(config_.severities);
  setup_journal();
  if (hub_ && !hub_->apply(socket_config())) {
    spdlog::warn(
        "socket: path, mode, group, ring_records and enabled change at restart only; "
        "the new limits apply now");
  }
  rescan();  // applies devices.include/exclude
}

// --- subscriber hub -------------------------------------------------------------------------

SocketConfig Daemon::socket_config() const {
  SocketConfig s = config_.socket;
  if (options_.socket_path) {
    s.path = *options_.socket_path;
    s.enabled = true;
  }
  if (options_.no_socket) s.enabled = false;
  return s;
}

void Daemon::setup_hub() {
  const SocketConfig s = socket_config();
  if (!s.enabled) return;
  const StateSource& state = *this;
  hub_ = std::make_unique<SubscriberHub>(
      loop_, state, SubscriberHub::Identity{kVersion, stamper_.stream(), stamper_.host()}, s,
      std::exchange(passed_socket_, -1));
  hub_->on_subscribers_changed([this] { update_service_status(); });
}

std::vector<const DeviceView*> Daemon::device_views() const {
  std::vector<const DeviceView*> out;
  out.reserve(devices_.size());
  for (const auto& [index, dev] : devices_)
    out.push_back(&dev->view);
  return out;
}

DaemonCounters Daemon::counters() const {
  DaemonCounters c;
  c.events_read = counters_.events_read;
  c.events_acked = counters_.events_acked;
  c.records = counters_.records;
  c.batches = counters_.batches;
  c.query_failures = counters_.query_failures;
  if (journal_) {
    const JournalSink::Stats j = journal_->stats();
    c.journal_enabled = true;
    c.journal_written = j.written;
    c.journal_failed = j.failed;
    c.journal_dropped = j.dropped;
  }
  return c;
}

}  // namespace rdma_eventd::daemon
