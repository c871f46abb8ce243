#include "app/daemon.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

#include "core/devlink_map.h"
#include "core/devx_decode.h"
#include "core/enricher.h"
#include "core/link_quality_record.h"
#include "devlink/sysfs_handles.h"
#include "hub/hub.h"
#include "rdma_eventd/version.h"
#include "schema/record_json.h"
#include "systemd/journal_sink.h"
#include "systemd/service_manager.h"
#include "verbs/verbs.h"

namespace rdma_eventd::daemon {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// --print-records: one JSON line per record on stdout. Blocking by nature: meant for the
// foreground demo and debugging; consumers use the journal or the subscriber socket.
class StdoutSink final : public RecordSink {
 public:
  void publish(const Record&, std::string_view json) override {
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
  }
  void flush() override { std::fflush(stdout); }
};

std::string budget_text(const JournalBudgetConfig& b) {
  if (!b.enabled) return "off (every record is journaled)";
  return fmt::format("port {}/s burst {}, host {}/s burst {}, summaries every {} s", b.port_rate,
                     b.port_burst, b.host_rate, b.host_burst, b.summary_interval_s);
}

}  // namespace

Daemon::Daemon(Options options, Config config)
    : options_(std::move(options)),
      config_(std::move(config)),
      stamper_(new_stream_id(), host_name(), config_.severities),
      devices_(loop_, stamper_, std::make_unique<verbs::Catalog>(), system_clock(),
               [this](std::vector<Record>& records) { publish(records); }),
      hotplug_(
          loop_, [this](std::string_view why) { devices_.resync(DeviceSet::Mode::kChange, why); },
          options_.rdma_netlink_socket, options_.kernel_release),
      backpressure_(loop_, [this](bool paused) { devices_.pause_reading(paused); }) {
  devices_.set_filter(config_.devices);
  devices_.on_change([this] {
    forget_devlink_handles();  // devices opened, closed or renamed
    // Read now, while every open device's sysfs is there: one that closes later is still
    // mapped (closed_devlink_) however soon its reporters speak.
    if (devlink_.config().enabled) devlink_handles();
    devlink_.devices_changed();
    hotplug_.set_unannounced(devices_.unannounced_removals());
    update_service_status();
  });
}

Daemon::~Daemon() {
  signals_.clear();
  hub_.reset();
  backpressure_.attach(nullptr);  // its watch on the journal's wake fd goes first
  journal_.reset();
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
    devices_.resync(DeviceSet::Mode::kChange, "SIGUSR1");
  }));
  if (options_.print_records) stdout_sink_ = std::make_unique<StdoutSink>();
  setup_journal();
  setup_hub();
  spdlog::info("rdma-eventd {} started: stream {}, host {}, journal {}", kVersion,
               stamper_.stream(), stamper_.host(), journal_ ? "on" : "off");
  if (journal_) spdlog::info("journal budget: {}", budget_text(config_.journal_budget));
  // Hot-plug news first, then the list: a device that comes between the two is not missed.
  hotplug_.start();
  health_.restore(system_clock().now());  // before the first record is judged
  devices_.resync(DeviceSet::Mode::kStartup, "start");
  // The ports' counters as a previous run left them, on this boot: their faults go into port
  // health before it observes the ports, so that a port degraded by them stays degraded.
  links_.restore(devices_.views(), system_clock().now());
  health_.observe_devices(devices_.views(), system_clock().now());
  links_.observe_devices(devices_.views(), system_clock().now());
  // After the devices: the reporters found in error at start map to the devices open now.
  devlink_.start();
  spdlog::info("ready: watching {} device{}", devices_.watched(),
               devices_.watched() == 1 ? "" : "s");
  service_->ready(service_status());
}

int Daemon::run() {
  const int rc = loop_.run();
  service_->stopping();
  budget_.flush(system_clock().now());  // the summaries still pending, cut short
  health_.stop();
  links_.stop();
  const DeviceStats& d = devices_.stats();
  spdlog::info("stopped after {} records ({} events read and acked)", records_, d.events_acked);
  return rc == 0 ? 0 : 1;
}

void Daemon::setup_journal() {
  const bool want = config_.journal_enabled && !options_.no_journal;
  if (want && !journal_) {
    journal_ = std::make_unique<JournalSink>(config_.journal_identifier, kJournalQueueEntries);
  } else if (!want && journal_) {
    budget_.flush(system_clock().now());  // while the journal is still there to take them
    backpressure_.attach(nullptr);
    journal_.reset();
  } else if (journal_) {
    journal_->set_identifier(config_.journal_identifier);
  }
  backpressure_.attach(journal_.get());
}

void Daemon::write_summary(BudgetSummary& summary) {
  if (health_.enabled() && !summary.device.empty()) {
    const auto v = health_.model().verdict(summary.device, summary.port, system_clock().now());
    if (v) summary.health = health_name(v->health);
  }
  if (journal_)
    journal_->publish_summary(summary_journal_fields(summary, config_.journal_identifier));
}

void Daemon::publish(std::vector<Record>& records) {
  const Instant now = system_clock().now();  // the journal budget's time for the batch
  for (Record& r : records) {
    if (r.event == EventKind::kGidChange) forget_devlink_handles();  // a port's netdev may differ
    health_.judge(r, now);
    links_.on_record(r, now, link_changes_);
    send(r, now);
  }
  // What the ports' counters said at those records (or at the timer), then into port health.
  std::vector<Record> link_records;  // sent: the journal's batch points into it
  for (const auto& c : link_changes_) {
    for (const LinkQualityChange& change : c.changes) {
      link_records.push_back(
          link_quality_record(c.device, c.node_guid, c.port, change, c.rate, c.pegged));
      stamper_.stamp(link_records.back(),
                     link_changes_at_ ? link_changes_at_->wall_us : now.wall_us);
      link_records.back().severity = link_change_severity(change.kind);
    }
  }
  for (const Record& r : link_records)
    send(r, now);
  for (const auto& c : link_changes_)
    health_.judge_link(c.device, c.port, c.faults, c.hidden_downs, now);
  link_changes_.clear();
  link_changes_at_.reset();
  // The verdicts those records changed, after them.
  std::vector<Record> verdicts = health_.take_records(now);
  for (Record& r : verdicts)
    send(r, now);
  if (stdout_sink_) stdout_sink_->flush();
  if (hub_) hub_->flush();
  if (journal_) {
    // The journal's entries are written once the subscribers have the batch: they wait for
    // none of it.
    for (const auto& [record, line] : journal_batch_)
      journal_->publish(*record, *line);
    journal_batch_.clear();
    journal_->flush();  // before the budget's summaries, which follow the records
    budget_.after_batch(now);
  }
  backpressure_.after_publish();
  memory_trim_.note_work(records.size());
  update_service_status();  // port states
}

LinkHealthMonitor::PortLink Daemon::port_link(std::string_view device, uint32_t port) const {
  for (const DeviceView* v : devices_.views()) {
    if (v->name != device || port == 0 || port > v->num_ports()) continue;
    const auto& pv = v->ports[port - 1];
    LinkHealthMonitor::PortLink link;
    link.ethernet = pv.info.link_layer == LinkLayer::kEthernet;
    for (const GidEntry& g : pv.gids) {
      if (!link.ethernet || g.netdev.empty()) continue;
      link.netdev = g.netdev;
      break;
    }
    return link;
  }
  return {};
}

// Port health's verdicts, with what each port's error counters say: a healthy port whose link
// was not judged (link_quality "unknown") is no port judged clean.
HealthReply Daemon::health() const {
  HealthReply h = health_.reply(system_clock().now());
  for (HealthReply::Port& p : h.ports) {
    if (const auto q = links_.quality(p.device, p.port)) {
      p.link_quality = q->quality;
      p.link_quality_reason = q->unknown;
    }
  }
  return h;
}

void Daemon::judge_links(std::vector<LinkHealthMonitor::PortChanges>& changes, Instant sampled) {
  link_changes_ = std::move(changes);
  // Dated when the counters were read: a clean record is then clean_s after its bad one, however
  // long the writes between a read and its publishing took.
  link_changes_at_ = sampled;
  std::vector<Record> none;
  publish(none);  // their records, and the verdicts they changed
}

void Daemon::forget_devlink_handles() {
  if (!devlink_handles_) return;
  // Each may be a device that just closed: kept until it is open again.
  for (DevlinkHandles& h : *devlink_handles_) {
    if (closed_devlink_.size() >= kClosedDevlinkKept && !closed_devlink_.count(h.node_guid))
      closed_devlink_.erase(closed_devlink_.begin());
    closed_devlink_[h.node_guid] = std::move(h);
  }
  devlink_handles_.reset();
}

const std::vector<DevlinkHandles>& Daemon::devlink_handles() const {
  if (!devlink_handles_) {
    std::vector<DevlinkHandles> out;
    for (const DeviceView* v : devices_.views()) {
      DevlinkHandles h = read_devlink_handles(devices_.ibdev_path(v->name), *v);
      const auto before = closed_devlink_.find(h.node_guid);
      out.push_back(handles_or_before(std::move(h),
                                      before == closed_devlink_.end() ? nullptr : &before->second));
    }
    // A closed device is forgotten once it is open again; one whose name an open device has
    // now (a re-registration under another index) is not mapped under that name.
    for (const DevlinkHandles& h : out)
      closed_devlink_.erase(h.node_guid);
    const size_t open = out.size();
    for (const auto& [guid, h] : closed_devlink_) {
      const bool name_taken =
          std::any_of(out.begin(), out.begin() + static_cast<long>(open),
                      [&](const DevlinkHandles& o) { return o.device == h.device; });
      if (!name_taken) out.push_back(h);
    }
    devlink_handles_ = std::move(out);
  }
  return *devlink_handles_;
}

void Daemon::publish_devlink(std::vector<Record>& records) {
  const int64_t now_us = system_clock().now().wall_us;
  for (Record& r : records) {
    stamper_.stamp(r, now_us);
    // severity.devlink_health is a report's; a recovery is notice.
    if (r.event == EventKind::kDevlinkHealth && r.devlink && r.devlink->change == "recovered")
      r.severity = Severity::kNotice;
  }
  publish(records);
}

void Daemon::confirm_devlink(const std::vector<DevlinkInError>& in_error) {
  health_.confirm_devlink(in_error, system_clock().now());
  std::vector<Record> none;
  publish(none);  // the verdicts it changed
}

void Daemon::send(const Record& r, Instant now) {
  // Serialized once, into the one buffer that the replay ring and every subscriber's queue
  // share, and the journal's entry copies: the record's JSON and a newline. Built in a record
  // the ring let go of when there is one: its buffers are reused.
  const RecordPtr published = publish_record(r, hub_ ? hub_->take_spare() : nullptr);
  if (stdout_sink_) {
    const std::string_view line = published->line;
    stdout_sink_->publish(r, line.substr(0, line.size() - 1));
  }
  if (hub_) hub_->publish(published);
  ++records_;
  event_counter_.count(r);
  if (journal_ && budget_.admit(r, now)) journal_batch_.emplace_back(&r, line_of(published));
}

void Daemon::reload() {
  spdlog::info("SIGHUP: reloading {}", options_.config_path);
  ConfigResult result = load_configuration(options_);
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
  if (next.journal_budget != budget_.config()) {
    // What is pending is summarized under the budget it was counted against.
    budget_.set_config(next.journal_budget, system_clock().now());
    spdlog::info("journal budget: {}", budget_text(next.journal_budget));
  }
  setup_journal();
  if (hub_) hub_->set_reports(config_.reports);
  if (hub_ && !hub_->apply(socket_config())) {
    spdlog::warn(
        "socket: path, mode, group, ring_records and enabled change at restart only; "
        "the new limits apply now");
  }
  health_.set_config(config_.health);
  const bool devlink_was_on = devlink_.config().enabled;
  devlink_.set_config(config_.devlink_health);
  const bool links_were_on = links_.config().enabled;
  const Instant now = system_clock().now();
  // No longer followed: what its reporters held would never be released.
  if (devlink_was_on && !config_.devlink_health.enabled) health_.forget_devlink(now);
  // Ports whose counters are no longer judged drop their link faults (config_changed).
  for (const auto& c : links_.set_config(config_.link_health))
    health_.judge_link(c.device, c.port, 0, 0, now, true);
  std::vector<Record> none;
  publish(none);
  // Turned on: the ports up now are read (a baseline) and the timer armed.
  if (!links_were_on && config_.link_health.enabled) links_.observe_devices(devices_.views(), now);
  devices_.set_filter(config_.devices);
  devices_.resync(DeviceSet::Mode::kReload, "configuration reloaded");
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
  StateSource& state = *this;
  hub_ = std::make_unique<SubscriberHub>(
      loop_, state, SubscriberHub::Identity{kVersion, stamper_.stream(), stamper_.host()}, s,
      config_.reports,
      SubscriberHub::PassedSockets{std::move(passed_socket_), std::move(passed_report_socket_)});
  hub_->on_subscribers_changed([this] {
    memory_trim_.note_work(1);
    update_service_status();
  });
  // Application reports: stamped and published like the devices' records, to every sink.
  hub_->on_report([this](Record report) {
    std::vector<Record> batch{std::move(report)};
    stamper_.stamp(batch.front(), realtime_us());
    const uint64_t seq = batch.front().seq;  // publish() moves the record away
    publish(batch);
    return seq;
  });
}

namespace {

// Every open device and its ports as the daemon knows them, with their tables' sizes.
std::vector<StatusReply::Device> device_status(const std::vector<const DeviceView*>& views) {
  std::vector<StatusReply::Device> out;
  for (const DeviceView* d : views) {
    StatusReply::Device device{d->name, format_guid(d->node_guid), {}};
    for (uint32_t p = 1; p <= d->num_ports(); ++p) {
      const PortView& pv = d->ports[p - 1];
      StatusReply::Port port{pv.info, pv.gids.size(), 0};
      port.info.port = p;
      port.pkeys = static_cast<uint64_t>(
          std::count_if(pv.pkeys.begin(), pv.pkeys.end(), [](uint16_t k) { return k != 0; }));
      device.ports.push_back(port);
    }
    out.push_back(std::move(device));
  }
  return out;
}

// Each device's DEVX vendor events: the state, what is subscribed, the counts.
void add_devx_status(std::vector<StatusReply::Device>& devices,
                     const std::map<std::string, DevxReport>& reports) {
  for (StatusReply::Device& d : devices) {
    auto it = reports.find(d.device);
    if (it == reports.end()) continue;
    const DevxReport& r = it->second;
    d.devx = StatusReply::Devx{std::string(devx_state_name(r.status.state)),
                               devx::event_names(r.status.events), r.status.reason, r.events_read,
                               r.events_lost};
  }
}

}  // namespace

// The status reply's blocks that the daemon owns, each from the component that counts it.
StatusReply Daemon::status() const {
  StatusReply s;
  s.daemon = StatusReply::Daemon{
      .version = kVersion,
      .protocol = kProtocolVersion,
      .stream = stamper_.stream(),
      .host = stamper_.host(),
      .pid = ::getpid(),
      .started_us = started_us_,
      .uptime_s = static_cast<uint64_t>(monotonic_us() - started_monotonic_us_) / 1000000,
  };
  const DeviceStats& d = devices_.stats();
  s.counters = StatusReply::Counters{
      .events_read = d.events_read,
      .events_acked = d.events_acked,
      .records = records_,
      .batches = d.batches,
      .query_failures = d.query_failures,
      .resyncs = d.resyncs,
      .devices_waiting = devices_.waiting(),
  };
  const HotplugStats& h = hotplug_.stats();
  s.hotplug = StatusReply::Hotplug{.source = std::string(h.source()),
                                   .udev_events = h.udev_events,
                                   .udev_overflows = h.overflows,
                                   .netlink_events = h.netlink_events,
                                   .netlink_overruns = h.netlink_overruns,
                                   .rescanning = h.rescanning,
                                   .rescan_for = h.rescan_for};
  if (journal_) {
    const JournalSink::Stats j = journal_->stats();
    const BackpressureStats& b = backpressure_.stats();
    s.journal = StatusReply::Journal{
        .enabled = true,
        .written = j.written,
        .failed = j.failed,
        .dropped = j.dropped,
        .queued = journal_->queued(),
        .waits = b.pauses,
        .stalls = b.stalls,
        .budget = budget_.config().enabled,
        .not_journaled = budget_.stats().not_journaled,
        .summaries = j.summaries_written,
    };
  }
  s.devices = device_status(devices_.views());
  add_devx_status(s.devices, devices_.devx_reports());
  s.event_counts = event_counter_.counts();
  s.link_health = link_health_status(links_, devices_.views());
  s.devlink = devlink_.status();
  return s;
}

}  // namespace rdma_eventd::daemon
