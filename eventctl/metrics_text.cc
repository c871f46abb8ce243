// Metric names follow Prometheus' conventions (rdma_eventd_ prefix, base units, _total for
// counters) and node_exporter's infiniband collector where they say the same thing: the
// `device` and `port` labels, state_id and physical_state_id numbered as the kernel numbers them,
// rate in bytes per second (docs/metrics.md has the mapping).
#include "metrics_text.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace rdma_eventctl {

using namespace rdma_eventd;

namespace {

using Labels = std::vector<std::pair<std::string_view, std::string>>;

// A state's number as the kernel numbers it; no sample where it is unknown.
template <typename State>
std::optional<std::string> known_id(State s) {
  if (s == State::kUnknown) return std::nullopt;
  return std::to_string(static_cast<int>(s));
}

// Writes the families one after the other: a family's samples must follow its HELP and TYPE.
class Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  void sample(std::string_view name, const Labels& labels, const std::string& value) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i) out_ += ',';
        out_ += labels[i].first;
        out_ += "=\"";
        out_ += escape_label_value(labels[i].second);
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
    out_ += value;
    out_ += '\n';
  }
  void sample(std::string_view name, const Labels& labels, uint64_t value) {
    sample(name, labels, std::to_string(value));
  }
  // A family of one unlabelled sample.
  void single(std::string_view name, std::string_view type, std::string_view help,
              const std::string& value) {
    family(name, type, help);
    sample(name, {}, value);
  }
  void single(std::string_view name, std::string_view type, std::string_view help, uint64_t value) {
    single(name, type, help, std::to_string(value));
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The shortest text that reads back as the same double ("1e-12", not 9.9999999999999998e-13):
// a bit error rate is read by people and alert rules.
std::string shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return ec == std::errc() ? std::string(buf, end) : decimal(v);
}

Labels port_labels(const std::string& device, uint32_t port) {
  return {{"device", device}, {"port", std::to_string(port)}};
}

// A gauge of one sample per port of `ports` (each with its device and port), `value(port)`.
template <typename Ports, typename Value>
void port_gauge(Exposition& e, std::string_view name, std::string_view help, const Ports& ports,
                Value value) {
  e.family(name, "gauge", help);
  for (const auto& p : ports)
    e.sample(name, port_labels(p.device, p.port), value(p));
}

void daemon_metrics(Exposition& e, const StatusReply& s) {
  e.single("rdma_eventd_up", "gauge", "1 when the daemon answered, 0 when it cannot be reached.",
           1);
  e.family("rdma_eventd_info", "gauge", "The daemon's version, as a label; always 1.");
  e.sample("rdma_eventd_info", {{"version", s.daemon.version}}, 1);
  e.single("rdma_eventd_start_time_seconds", "gauge",
           "When the daemon started, in seconds since the Unix epoch.",
           decimal(static_cast<double>(s.daemon.started_us) / 1e6));
  e.single("rdma_eventd_devices", "gauge", "RDMA devices the daemon has open.", s.devices.size());
  e.single("rdma_eventd_devices_waiting", "gauge",
           "Devices listed but not openable yet (retried with backoff).",
           s.counters.devices_waiting);
  e.single("rdma_eventd_subscribers", "gauge", "Clients connected to the subscriber socket.",
           s.subscribers.count);
  e.single("rdma_eventd_events_read_total", "counter", "Async events read from the devices.",
           s.counters.events_read);
  e.single("rdma_eventd_records_published_total", "counter",
           "Records the daemon published (events, its own records, port health).",
           s.counters.records);
  e.single("rdma_eventd_records_lost_total", "counter",
           "Records dropped for subscribers that read too slowly (each told with a lost line).",
           s.subscribers.records_lost);
  e.single("rdma_eventd_journal_enabled", "gauge", "1 when records go to the journal.",
           s.journal.enabled ? 1 : 0);
  e.single("rdma_eventd_journal_entries_written_total", "counter",
           "Journal entries written (records and summaries).", s.journal.written);
  e.single("rdma_eventd_journal_entries_failed_total", "counter",
           "Journal entries journald refused.", s.journal.failed);
  e.single("rdma_eventd_journal_entries_dropped_total", "counter",
           "Journal entries dropped because the writer's queue was full.", s.journal.dropped);
  e.single("rdma_eventd_journal_records_summarized_total", "counter",
           "Records the journal budget kept out of the journal, counted in summaries instead.",
           s.journal.not_journaled);
  e.single("rdma_eventd_journal_summaries_total", "counter",
           "Summary entries the journal budget wrote.", s.journal.summaries);
  e.single("rdma_eventd_events_untracked_total", "counter",
           "Records not counted by port: the daemon's table of ports was full.",
           s.event_counts.untracked);
}

void port_state_metrics(Exposition& e, const StatusReply& s) {
  const auto each_port = [&](std::string_view name, std::string_view type, std::string_view help,
                             auto value) {
    e.family(name, type, help);
    for (const StatusReply::Device& d : s.devices) {
      for (const StatusReply::Port& p : d.ports) {
        if (auto v = value(p.info)) e.sample(name, port_labels(d.device, p.info.port), *v);
      }
    }
  };
  e.family("rdma_eventd_port_info", "gauge",
           "Every port the daemon watches, with its node GUID and link layer; always 1.");
  for (const StatusReply::Device& d : s.devices) {
    for (const StatusReply::Port& p : d.ports) {
      Labels l = port_labels(d.device, p.info.port);
      l.emplace_back("node_guid", d.node_guid);
      l.emplace_back("link_layer", std::string(link_layer_name(p.info.link_layer)));
      e.sample("rdma_eventd_port_info", l, 1);
    }
  }
  each_port("rdma_eventd_port_state_id", "gauge",
            "Logical state: 1 down, 2 init, 3 armed, 4 active, 5 active_defer.",
            [](const PortInfo& p) { return known_id(p.state); });
  each_port("rdma_eventd_port_physical_state_id", "gauge",
            "Physical state: 1 sleep, 2 polling, 3 disabled, 4 training, 5 link up, 6 link error "
            "recovery, 7 phy test.",
            [](const PortInfo& p) { return known_id(p.phys_state); });
  each_port("rdma_eventd_port_rate_bytes_per_second", "gauge",
            "Data rate of the link (width times lane speed), in bytes per second; no sample "
            "where the width or the speed is unknown.",
            [](const PortInfo& p) -> std::optional<std::string> {
              // An unknown rate is no sample, never a link at 0 (docs/health.md).
              if (p.lanes == 0 || p.speed == LinkSpeed::kUnknown) return std::nullopt;
              return decimal(p.rate_gbps() * 1e9 / 8);
            });
  each_port("rdma_eventd_port_lid", "gauge", "The port's LID (0: none, as on Ethernet).",
            [](const PortInfo& p) -> std::optional<std::string> { return std::to_string(p.lid); });
}

void health_metrics(Exposition& e, const HealthReply& h) {
  e.single("rdma_eventd_health_enabled", "gauge", "1 when the daemon judges port health.",
           h.enabled ? 1 : 0);
  e.family("rdma_eventd_port_health", "gauge",
           "The port's health verdict, as the health label; always 1 (docs/health.md).");
  for (const HealthReply::Port& p : h.ports) {
    Labels l = port_labels(p.device, p.port);
    l.emplace_back("health", p.health);
    l.emplace_back("reason", p.reason);
    e.sample("rdma_eventd_port_health", l, 1);
  }
  port_gauge(e, "rdma_eventd_port_in_service",
             "1 when the port has been up since the daemon first saw it, so its health counts.",
             h.ports, [](const HealthReply::Port& p) { return p.counted ? 1 : 0; });
  port_gauge(
      e, "rdma_eventd_port_health_since_seconds",
      "When the port got its verdict, in seconds since the Unix epoch.", h.ports,
      [](const HealthReply::Port& p) { return decimal(static_cast<double>(p.since_us) / 1e6); });
  port_gauge(e, "rdma_eventd_port_downs_in_window",
             "Times the port went down within the health model's flap window.", h.ports,
             [](const HealthReply::Port& p) { return p.downs_in_window; });
}

// "a,b" -> {"a", "b"}; "" -> {}.
std::vector<std::string> comma_separated(std::string_view list) {
  std::vector<std::string> names;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (comma != 0) names.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return names;
}

// The daemon's judgement of each port's link from its error counters (docs/health.md, "Link
// quality"), not the counters themselves: node_exporter's infiniband collector exports those.
// Every fault the daemon knows has a series per port read, 0 or 1, so that a fault that comes
// is a change of value and not a series that appears (alerts and increase() see it at once).
void link_health_metrics(Exposition& e, const StatusReply::LinkHealth& l) {
  static constexpr std::string_view kFaults[] = {"bit_errors", "link_recoveries",
                                                 "transport_errors"};
  e.single("rdma_eventd_link_health_enabled", "gauge",
           "1 when the daemon reads the ports' error counters and judges their links.",
           l.enabled ? 1 : 0);
  e.single("rdma_eventd_link_read_failures_total", "counter",
           "Devices whose error counters could not be read (not read again until reopened).",
           l.read_failures);
  e.single("rdma_eventd_link_read_retries_total", "counter",
           "Reads of error counters that failed in a way that may pass (each retried later).",
           l.read_retries);
  e.single("rdma_eventd_link_reads_hung_total", "counter",
           "Reads of error counters that had not returned by link_health.read_deadline_s.",
           l.reads_hung);
  // 0 for a port its last read judged: "not judged" is never read as "judged clean".
  e.family("rdma_eventd_link_unknown", "gauge",
           "1 when the port's link quality is not judged now (its link down, its counters "
           "unreadable, hung or pegged, ...), by reason; 0 when its last read judged it.");
  for (const StatusReply::LinkPort& p : l.ports) {
    Labels labels = port_labels(p.device, p.port);
    labels.emplace_back("reason", p.unknown);
    e.sample("rdma_eventd_link_unknown", labels, p.unknown.empty() ? 0 : 1);
  }
  port_gauge(e, "rdma_eventd_link_bad",
             "1 when the port's error counters make its link bad (docs/health.md, Link quality).",
             l.ports, [](const StatusReply::LinkPort& p) { return p.bad ? 1 : 0; });
  e.family("rdma_eventd_link_fault", "gauge",
           "1 for each fault that makes the port's link bad, 0 for the others, by fault.");
  for (const StatusReply::LinkPort& p : l.ports) {
    const std::vector<std::string> faults = comma_separated(p.faults);
    const auto sample = [&](std::string_view fault, bool on) {
      Labels labels = port_labels(p.device, p.port);
      labels.emplace_back("fault", std::string(fault));
      e.sample("rdma_eventd_link_fault", labels, on ? 1 : 0);
    };
    for (std::string_view fault : kFaults)
      sample(fault, std::find(faults.begin(), faults.end(), fault) != faults.end());
    // A fault of a newer daemon, by its name, while it is there.
    for (const std::string& fault : faults) {
      if (std::find(std::begin(kFaults), std::end(kFaults), fault) == std::end(kFaults)) {
        sample(fault, true);
      }
    }
  }
  // Only where it is known: no sample stands for a port whose estimate is not (0 would say "no
  // errors").
  e.family("rdma_eventd_link_ber_estimate", "gauge",
           "symbol_error growth per bit over the longest bit error window: the bit error rate "
           "after FEC.");
  for (const auto& p : l.ports) {
    if (p.ber_estimate) {
      e.sample("rdma_eventd_link_ber_estimate", port_labels(p.device, p.port),
               shortest(*p.ber_estimate));
    }
  }
  e.family("rdma_eventd_link_pegged", "gauge",
           "1 for each error counter at its maximum: its errors are unknown until it is reset.");
  for (const StatusReply::LinkPort& p : l.ports) {
    for (const std::string& counter : comma_separated(p.pegged)) {
      Labels labels = port_labels(p.device, p.port);
      labels.emplace_back("counter", counter);
      e.sample("rdma_eventd_link_pegged", labels, 1);
    }
  }
}

// The counters, by (device, port); every watched port and every port with a verdict has its
// per-port counters, at 0 before its first event, so that increase() sees the first one.
void counter_metrics(Exposition& e, const StatusReply& s, const HealthReply& h) {
  struct PortCounts {
    uint64_t down_transitions = 0;
    uint64_t health_transitions = 0;
  };
  std::map<std::pair<std::string, uint32_t>, PortCounts> ports;
  for (const StatusReply::Device& d : s.devices) {
    for (const StatusReply::Port& p : d.ports)
      ports[{d.device, p.info.port}];
  }
  for (const HealthReply::Port& p : h.ports)
    ports[{p.device, p.port}];
  for (const StatusReply::EventCount& c : s.event_counts.ports) {
    if (c.port == 0) continue;
    PortCounts& pc = ports[{c.device, c.port}];
    pc.down_transitions = c.down_transitions;
    for (const auto& [event, n] : c.events) {
      if (event == "port_health") pc.health_transitions = n;
    }
  }
  e.family("rdma_eventd_port_events_total", "counter",
           "Records published about the port, by event.");
  for (const StatusReply::EventCount& c : s.event_counts.ports) {
    if (c.port == 0) continue;
    for (const auto& [event, n] : c.events) {
      Labels l = port_labels(c.device, c.port);
      l.emplace_back("event", event);
      e.sample("rdma_eventd_port_events_total", l, n);
    }
  }
  e.family("rdma_eventd_device_events_total", "counter",
           "Records published about a whole device (device_fatal, device_added, ...), by event.");
  for (const StatusReply::EventCount& c : s.event_counts.ports) {
    if (c.port != 0) continue;
    for (const auto& [event, n] : c.events)
      e.sample("rdma_eventd_device_events_total", {{"device", c.device}, {"event", event}}, n);
  }
  e.family("rdma_eventd_port_down_transitions_total", "counter",
           "Times the port's logical state left active (link flaps).");
  for (const auto& [where, pc] : ports) {
    e.sample("rdma_eventd_port_down_transitions_total", port_labels(where.first, where.second),
             pc.down_transitions);
  }
  e.family("rdma_eventd_port_health_transitions_total", "counter",
           "Times the port's health verdict changed (port_health records).");
  for (const auto& [where, pc] : ports) {
    e.sample("rdma_eventd_port_health_transitions_total", port_labels(where.first, where.second),
             pc.health_transitions);
  }
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The adapters' devlink health reporters (docs/health.md, "devlink health"): each one's state
// and the kernel's counts, by its devlink instance and name, and the RDMA ports it concerns
// ("" for none; "mlx5_0" for a device as a whole).
void devlink_metrics(Exposition& e, const StatusReply::Devlink& d) {
  e.single("rdma_eventd_devlink_available", "gauge",
           "1 when the daemon follows the kernel's devlink health reporters.", d.available ? 1 : 0);
  e.single("rdma_eventd_devlink_overruns_total", "counter",
           "Times the kernel dropped devlink notifications (the reporters were read again).",
           d.overruns);
  const auto labels_of = [](const StatusReply::DevlinkReporter& r) {
    std::string ports;
    for (const std::string& p : r.ports)
      ports += (ports.empty() ? "" : ",") + p;
    return Labels{{"handle", r.handle},
                  {"reporter", r.reporter},
                  {"port_index", r.port_index < 0 ? "" : std::to_string(r.port_index)},
                  {"ports", ports}};
  };
  e.family("rdma_eventd_devlink_reporter_error", "gauge",
           "1 while the devlink health reporter is in error, 0 when healthy.");
  for (const StatusReply::DevlinkReporter& r : d.reporters)
    e.sample("rdma_eventd_devlink_reporter_error", labels_of(r), r.state == "error" ? 1 : 0);
  e.family("rdma_eventd_devlink_reporter_errors_total", "counter",
           "Errors the reporter reported since it was created (the kernel's count).");
  for (const StatusReply::DevlinkReporter& r : d.reporters)
    e.sample("rdma_eventd_devlink_reporter_errors_total", labels_of(r), r.error_count);
  e.family("rdma_eventd_devlink_reporter_recoveries_total", "counter",
           "Recoveries of the reporter since it was created (the kernel's count).");
  for (const StatusReply::DevlinkReporter& r : d.reporters)
    e.sample("rdma_eventd_devlink_reporter_recoveries_total", labels_of(r), r.recover_count);
}

std::string metrics_text(const StatusReply& status, const HealthReply& health) {
  Exposition e;
  daemon_metrics(e, status);
  port_state_metrics(e, status);
  health_metrics(e, health);
  counter_metrics(e, status, health);
  link_health_metrics(e, status.link_health);
  devlink_metrics(e, status.devlink);
  return e.take();
}

std::string metrics_text_daemon_down() {
  Exposition e;
  e.single("rdma_eventd_up", "gauge", "1 when the daemon answered, 0 when it cannot be reached.",
           0);
  return e.take();
}

}  // namespace rdma_eventctl
