// rdma-journal-gen: a central journal of a simulated fleet, for rdma-eventctl history
// --incidents' tests and its scale benchmark (bench/incidents.sh, docs/benchmarks.md). Each
// host's entries are made as rdma-eventd makes them (the daemon's record and journal entry code:
// RecordStamper, to_json, append_journal_entry_head) with the fields journald adds, in journal
// export format, written through systemd-journal-remote into one journal file per host, as a
// receiver with SplitMode=host has them; as a receiver's journal, with other units' entries mixed
// in and each host's time split into archives (--other-units, --archives: journal_gen_receiver.h).
// tests/integration/journal_gen_test.cc checks an entry
// of every kind the scenarios write (port_state, port_err, port_active, sm_change, lid_change,
// client_reregister, device_fatal, app_report, and port_health with each verdict) field by
// field against the real daemon's for the same event.
//
//   rdma-journal-gen --scenario incidents --output DIR     the tests' small fleet (fixed)
//   rdma-journal-gen --scenario flapping --output DIR      a port flapping for hours (fixed)
//   rdma-journal-gen --scenario many-hosts --hosts 200 --output DIR   a file per host, each in
//                                                          an incident
//   rdma-journal-gen --hosts 1000 --records 1000000 --output DIR [--seed N] [--days D]
//                    [--other-units R] [--archives N] [--jobs J]
//   rdma-journal-gen --entry EVENT --host NAME             one entry on stdout (export format)
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/journal_entry.h"
#include "core/stamper.h"
#include "journal_gen_receiver.h"
#include "schema/record_json.h"

namespace {

using namespace rdma_eventd;
using rdma_eventd::daemon::RecordStamper;

constexpr int64_t kSecond = 1'000'000;
// 2026-11-27T00:00:00Z: the generated day starts here unless --start says otherwise.
constexpr int64_t kDefaultStartUs = 1'795'737'600LL * kSecond;
// __MONOTONIC_TIMESTAMP: the hosts booted an hour before the default start.
constexpr int64_t kMonotonicOffsetUs = 3600 * kSecond - kDefaultStartUs;

// What happens to one host at one time; made into a record when the host's entries are written.
struct Happening {
  int64_t time_us;
  EventKind event;
  uint32_t device;  // mlx5_<device>
  std::string health;
  std::string reason;
  std::string previous = {};  // port_health: the verdict before; empty: the usual one
  uint32_t downs = 0;         // port_health: the downs in the flap window
};

// The InfiniBand HDR port every generated host has (the simulator's two-adapters mlx5_0/1).
PortInfo port_block(bool active) {
  PortInfo p;
  p.port = 1;
  p.link_layer = LinkLayer::kInfiniband;
  p.state = active ? PortState::kActive : PortState::kDown;
  p.phys_state = active ? PhysState::kLinkUp : PhysState::kPolling;
  p.lid = active ? 7 : 0;
  p.sm_lid = active ? 1 : 0;
  p.active_mtu = 4096;
  p.lanes = 4;
  p.speed = LinkSpeed::kHdr;
  return p;
}

std::string hex_id(uint64_t a, uint64_t b) {
  char text[33];
  std::snprintf(text, sizeof text, "%016" PRIx64 "%016" PRIx64, a, b);
  return text;
}

// An event of port 1 (`event_type`, from enum ibv_event_type), with the port before and after.
void port_event(Record& r, int event_type, bool was_active, bool is_active) {
  r.event_type = event_type;
  r.port = 1;
  r.port_info = port_block(is_active);
  r.previous = port_block(was_active);
}

Record make_record(const Happening& h) {
  Record r;
  r.event = h.event;
  r.device = "mlx5_" + std::to_string(h.device);
  r.node_guid =
      h.device == 0 ? "0c42:a103:00f6:5e44" : "0c42:a103:00f6:5e4" + std::to_string(h.device);
  switch (h.event) {
    case EventKind::kPortErr:
      port_event(r, 10, true, false);
      break;
    case EventKind::kPortActive:
      port_event(r, 9, false, true);
      break;
    case EventKind::kSmChange:
    case EventKind::kLidChange:
    case EventKind::kClientReregister:
      // enum ibv_event_type: IBV_EVENT_LID_CHANGE 11, IBV_EVENT_SM_CHANGE 13,
      // IBV_EVENT_CLIENT_REREGISTER 17.
      port_event(r,
                 h.event == EventKind::kSmChange    ? 13
                 : h.event == EventKind::kLidChange ? 11
                                                    : 17,
                 true, true);
      break;
    case EventKind::kDeviceFatal:
      // IBV_EVENT_DEVICE_FATAL; the ports as last known, before the device died: up.
      r.event_type = 8;
      r.ports = {port_block(true)};
      break;
    case EventKind::kAppReport:
      r.event_type = 1;
      r.object = "qp";
      r.object_id = 4660;
      r.detail = "job 17 rank 3";
      r.reporter = {.pid = 21385,
                    .uid = 1000,
                    .gid = 1000,
                    .comm = "mpirun",
                    .unit = "job17.service",
                    .cgroup = "/system.slice/job17.service"};
      break;
    case EventKind::kPortHealth:
      r.port = 1;
      r.health = h.health;
      r.reason = h.reason;
      // A port's first verdict has none before it (null).
      r.previous_health = h.reason == "first_seen" ? ""
                          : h.previous.empty()     ? (h.health == "healthy" ? "down" : "healthy")
                                                   : h.previous;
      r.since_us = h.time_us;
      r.downs_in_window = h.downs;
      r.window_s = 10;
      r.quiet_s = 2;
      break;
    default:
      r.port = 1;
      r.port_info = port_block(true);
  }
  return r;
}

// One host's journal: its happenings in time order, as export-format entries.
class HostJournal {
 public:
  HostJournal(std::string name, uint64_t index, uint64_t seed)
      : name_(std::move(name)),
        stamper_(hex_id(seed, index), name_, daemon::default_severities()),
        boot_id_(hex_id(0xb007, index ^ seed)),
        machine_id_(hex_id(0x3ac1, index)),
        pid_(1000 + index % 30000) {}

  // Appends the entry for `h` to `out`; `copy_of`, when set, repeats that entry as the upload
  // does (same record, same seq).
  std::string entry(const Happening& h) {
    Record r = make_record(h);
    // A verdict's cause is the record before it (the port_err, port_active or device_fatal
    // that changed it), as the daemon publishes them; a first verdict has none.
    if (h.event == EventKind::kPortHealth && h.reason != "first_seen") r.cause_seq = last_seq_;
    stamper_.stamp(r, h.time_us);
    last_seq_ = r.seq;
    if (h.event == EventKind::kPortHealth) r.severity = health_severity(h.health);
    std::string out;
    out += "__REALTIME_TIMESTAMP=" + std::to_string(h.time_us) + "\n";
    out += "__MONOTONIC_TIMESTAMP=" + std::to_string(h.time_us + kMonotonicOffsetUs) + "\n";
    out += "_BOOT_ID=" + boot_id_ + "\n_MACHINE_ID=" + machine_id_ + "\n_HOSTNAME=" + name_ + "\n";
    out += "_TRANSPORT=journal\n_UID=0\n_GID=0\n_COMM=rdma-eventd\n_EXE=/usr/sbin/rdma-eventd\n";
    out += "_CMDLINE=/usr/sbin/rdma-eventd\n_PID=" + std::to_string(pid_) + "\n";
    out += "_SYSTEMD_CGROUP=/system.slice/rdma-eventd.service\n_SYSTEMD_UNIT=rdma-eventd.service\n";
    out += "_SYSTEMD_SLICE=system.slice\n";
    daemon::append_journal_entry_head(out, r, "rdma-eventd");
    append_json(out, r);
    out += "\n\n";
    return out;
  }
  rdma_journal_gen::HostIdentity identity() const {
    return {name_, boot_id_, machine_id_, kMonotonicOffsetUs};
  }

 private:
  static Severity health_severity(const std::string& h) {
    if (h == "healthy") return Severity::kNotice;
    if (h == "flapping") return Severity::kError;
    if (h == "fatal") return Severity::kCritical;
    return Severity::kWarning;
  }
  std::string name_;
  RecordStamper stamper_;
  std::string boot_id_;
  std::string machine_id_;
  uint64_t pid_;
  uint64_t last_seq_ = 0;
};

struct Fleet {
  std::vector<std::string> hosts;
  std::vector<std::vector<Happening>> happenings;  // per host
  size_t records = 0;

  void add(size_t host, Happening h) {
    happenings[host].push_back(std::move(h));
    ++records;
  }
  // A leaf switch goes away: each host's link drops within `spread`, the ports go down, the SM
  // fails over (sm_change), the links come back after `back`.
  void fabric(int64_t t, size_t first, size_t count, int64_t spread, int64_t back,
              std::mt19937_64& rng) {
    for (size_t i = first; i < first + count && i < hosts.size(); ++i) {
      const int64_t down = t + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread + 1));
      add(i, {down, EventKind::kPortErr, 0, "", ""});
      add(i, {down + 150, EventKind::kPortHealth, 0, "down", "link_down", "", 1});
      add(i, {t + spread + 200'000 + static_cast<int64_t>(rng() % 300'000), EventKind::kSmChange, 0,
              "", ""});
      add(i, {t + back, EventKind::kPortActive, 0, "", ""});
      add(i, {t + back + 150, EventKind::kPortHealth, 0, "healthy", "link_up", "", 1});
    }
  }
  // One port flaps: `downs` downs and ups, two seconds apart, then a flapping verdict.
  void flap(int64_t t, size_t host, int downs) {
    for (int i = 0; i < downs; ++i) {
      add(host, {t + i * 2 * kSecond, EventKind::kPortErr, 0, "", ""});
      add(host, {t + i * 2 * kSecond + kSecond, EventKind::kPortActive, 0, "", ""});
    }
    add(host, {t + (downs - 1) * 2 * kSecond + kSecond + 150, EventKind::kPortHealth, 0, "flapping",
               "flaps_in_window", "", static_cast<uint32_t>(downs)});
  }
  void fatal(int64_t t, size_t host) {
    add(host, {t, EventKind::kDeviceFatal, 0, "", ""});
    add(host, {t + 150, EventKind::kPortHealth, 0, "fatal", "device_fatal"});
  }
  void app_reports(int64_t t, size_t host, int count) {
    for (int i = 0; i < count; ++i)
      add(host, {t + i * 300'000, EventKind::kAppReport, 0, "", ""});
  }
  // A daemon start: the port's state and its first verdict (not faults).
  void start(int64_t t, size_t host) {
    add(host, {t, EventKind::kPortState, 0, "", ""});
    add(host, {t + 100, EventKind::kPortHealth, 0, "healthy", "first_seen"});
  }
};

std::string host_name(size_t i, size_t hosts) {
  char text[32];
  std::snprintf(text, sizeof text, hosts > 99 ? "node%04zu" : "node%02zu", i + 1);
  return text;
}

Fleet make_fleet(size_t hosts) {
  Fleet f;
  for (size_t i = 0; i < hosts; ++i)
    f.hosts.push_back(host_name(i, hosts));
  f.happenings.resize(hosts);
  return f;
}

// The tests' fleet (8 hosts): at +0 s hosts 1-6 lose their links within 0.6 s with an SM
// failover (fabric), at +60 s node07's port flaps (port), at +120 s node08's device fails
// (host), at +180 s jobs on node02 report QP errors (application).
Fleet incidents_scenario(int64_t t0) {
  Fleet f = make_fleet(8);
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < 8; ++i)
    f.start(t0 - 600 * kSecond, i);
  f.fabric(t0, 0, 6, 600'000, 30 * kSecond, rng);
  f.flap(t0 + 60 * kSecond, 6, 4);
  f.fatal(t0 + 120 * kSecond, 7);
  f.app_reports(t0 + 180 * kSecond, 1, 3);
  return f;
}

// The reader's test of many files (tests/integration/journal_files_test.cc): `hosts` hosts in
// leaves of 20; at t0 + 60 s * leaf, the leaf's hosts lose their links within 0.5 s with an SM
// failover (fabric), and 30 s later its eighth host's port flaps (port). Every host is in an
// incident, so a file left out shows.
Fleet many_hosts_scenario(size_t hosts, int64_t t0) {
  Fleet f = make_fleet(hosts);
  std::mt19937_64 rng(11);
  for (size_t i = 0; i < hosts; ++i)
    f.start(t0 - 600 * kSecond, i);
  for (size_t leaf = 0; leaf * 20 < hosts; ++leaf) {
    const int64_t t = t0 + static_cast<int64_t>(leaf) * 60 * kSecond;
    f.fabric(t, leaf * 20, 20, 500'000, 20 * kSecond, rng);
    if (leaf * 20 + 7 < hosts) f.flap(t + 30 * kSecond, leaf * 20 + 7, 3);
  }
  return f;
}

// A port flapping for two hours while other hosts fail (tests/integration/incidents_test.cc):
// node01's port goes down every 2 s from t0 for two hours, a flapping verdict every ten
// minutes; node02 to node31 each lose a link once, four minutes apart from t0 + 2 min. Chained
// by the gap alone, it is all one incident of 31 hosts that lost links.
Fleet flapping_scenario(int64_t t0) {
  Fleet f = make_fleet(31);
  for (size_t i = 0; i < 31; ++i)
    f.start(t0 - 600 * kSecond, i);
  for (int64_t t = 0; t < 7200 * kSecond; t += 2 * kSecond) {
    f.add(0, {t0 + t, EventKind::kPortErr, 0, "", ""});
    f.add(0, {t0 + t + kSecond, EventKind::kPortActive, 0, "", ""});
    if (t % (600 * kSecond) == 0)
      f.add(0, {t0 + t + 150, EventKind::kPortHealth, 0, "flapping", "flaps_in_window"});
  }
  for (size_t i = 1; i < 31; ++i) {
    const int64_t t = t0 + 120 * kSecond + static_cast<int64_t>(i - 1) * 240 * kSecond;
    f.add(i, {t, EventKind::kPortErr, 0, "", ""});
    f.add(i, {t + 150, EventKind::kPortHealth, 0, "down", "link_down"});
    f.add(i, {t + 10 * kSecond, EventKind::kPortActive, 0, "", ""});
    f.add(i, {t + 10 * kSecond + 150, EventKind::kPortHealth, 0, "healthy", "link_up"});
  }
  return f;
}

// `days` of a busy fleet: episodes at random times (fabric events on a leaf of 20 to 60 hosts,
// flapping ports, failed devices, application reports), and daemon starts, until `records`.
Fleet busy_fleet(size_t hosts, size_t records, int64_t t0, uint64_t seed, int64_t days) {
  Fleet f = make_fleet(hosts);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < hosts; ++i)
    f.start(t0 + static_cast<int64_t>(rng() % 60) * kSecond, i);
  const int64_t day = 86'400 * kSecond * std::max<int64_t>(days, 1);
  while (f.records < records) {
    const int64_t t = t0 + 120 * kSecond +
                      static_cast<int64_t>(rng() % static_cast<uint64_t>(day - 300 * kSecond));
    const size_t host = rng() % hosts;
    const uint64_t kind = rng() % 100;
    if (kind < 40) {
      const size_t leaf = 20 + rng() % 41;
      f.fabric(t, host - host % 20, leaf, 800'000,
               (10 + static_cast<int64_t>(rng() % 50)) * kSecond, rng);
    } else if (kind < 85) {
      f.flap(t, host, 2 + static_cast<int>(rng() % 40));
    } else if (kind < 90) {
      f.fatal(t, host);
    } else {
      f.app_reports(t, host, 1 + static_cast<int>(rng() % 5));
    }
  }
  return f;
}

// Writes each host's entries, in time order, through systemd-journal-remote into
// DIR/remote-HOST.journal (and its archives, journal_gen_receiver.h). `copies`: every copies-th
// entry is sent twice, as an upload that starts again from its cursor does.
bool write_fleet(Fleet& f, const std::string& dir, size_t copies,
                 rdma_journal_gen::ReceiverShape shape) {
  // A directory that is not there, or not one, is said before anything runs (a pipe to a
  // journal-remote that could not open its output would end this program with SIGPIPE).
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || ::access(dir.c_str(), W_OK) != 0) {
    const int error = ::stat(dir.c_str(), &st) != 0 ? errno
                      : S_ISDIR(st.st_mode)         ? EACCES
                                                    : ENOTDIR;
    std::fprintf(stderr, "rdma-journal-gen: --output %s: %s\n", dir.c_str(), std::strerror(error));
    return false;
  }
  // The time the archives split: from the fleet's first entry to its last.
  shape.from_us = INT64_MAX;
  shape.to_us = INT64_MIN;
  for (const auto& list : f.happenings) {
    for (const auto& h : list) {
      shape.from_us = std::min(shape.from_us, h.time_us);
      shape.to_us = std::max(shape.to_us, h.time_us + 1);
    }
  }
  if (shape.from_us > shape.to_us) shape.from_us = shape.to_us = 0;
  const auto host = [&](size_t i) {
    auto& list = f.happenings[i];
    std::stable_sort(list.begin(), list.end(),
                     [](const Happening& a, const Happening& b) { return a.time_us < b.time_us; });
    HostJournal journal(f.hosts[i], i, shape.seed);
    rdma_journal_gen::HostEntries out{journal.identity(), {}, list.size()};
    size_t n = 0;
    for (const auto& h : list) {
      out.rdma.push_back({h.time_us, journal.entry(h)});
      if (copies && ++n % copies == 0) out.rdma.push_back(out.rdma.back());
    }
    return out;
  };
  return rdma_journal_gen::write_receiver(dir, f.hosts.size(), host, shape);
}

// What make_record makes: the kinds the scenarios write (and the notices of a port's SM and
// address, which it makes alike).
constexpr EventKind kEntryKinds[] = {
    EventKind::kPortState,   EventKind::kPortErr,   EventKind::kPortActive,
    EventKind::kSmChange,    EventKind::kLidChange, EventKind::kClientReregister,
    EventKind::kDeviceFatal, EventKind::kAppReport, EventKind::kPortHealth};

int usage() {
  std::fputs(
      "usage: rdma-journal-gen --scenario incidents|flapping --output DIR [--start US] "
      "[--copies N]\n"
      "       rdma-journal-gen --scenario many-hosts [--hosts N] --output DIR\n"
      "       rdma-journal-gen --hosts N --records M --output DIR [--seed S] [--start US]\n"
      "                        [--days D] [--other-units R] [--archives N] [--jobs J]\n"
      "                        [--sparse 1]   (free the files' zero blocks: the disk they take)\n"
      "         --days: the records over D days (1); --other-units: other units' entries per\n"
      "         record (100 with --hosts, else 0); --archives: files per host, the time split\n"
      "         among them (1); --jobs: hosts written at once (the processors)\n"
      "       rdma-journal-gen --entry EVENT --host NAME [--health H --reason R --previous P\n"
      "                        --downs N]\n"
      "         EVENT: port_state, port_err, port_active, sm_change, lid_change,\n"
      "         client_reregister, device_fatal, app_report, port_health\n",
      stderr);
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0) return usage();
    opt[argv[i] + 2] = argv[i + 1];
  }
  if (argc % 2 == 0) return usage();
  const auto number = [&](const char* key, uint64_t fallback) {
    return opt.count(key) ? std::strtoull(opt[key].c_str(), nullptr, 10) : fallback;
  };
  const int64_t start = static_cast<int64_t>(number("start", kDefaultStartUs));
  const uint64_t seed = number("seed", 1);

  if (opt.count("entry")) {
    // One entry, as the daemon's for the same event on the simulator's mlx5_0/1 would be.
    HostJournal journal(opt.count("host") ? opt["host"] : "node01", 0, seed);
    const std::string& event = opt["entry"];
    const auto kind = event_from_name(event);
    if (!kind ||
        std::find(std::begin(kEntryKinds), std::end(kEntryKinds), *kind) == std::end(kEntryKinds))
      return usage();
    Happening h{start, *kind, 0, "", ""};
    if (*kind == EventKind::kPortHealth) {
      h.health = opt.count("health") ? opt["health"] : "down";
      h.reason = opt.count("reason") ? opt["reason"] : "link_down";
      h.previous = opt.count("previous") ? opt["previous"] : "";
      h.downs = static_cast<uint32_t>(number("downs", 0));
    }
    // A verdict with a cause comes after it, as in a scenario (its cause_seq is the seq before
    // its own): the cause's entry is made first, and left out.
    if (*kind == EventKind::kPortHealth && h.reason != "first_seen") {
      const EventKind cause = h.reason == "link_up"        ? EventKind::kPortActive
                              : h.reason == "device_fatal" ? EventKind::kDeviceFatal
                                                           : EventKind::kPortErr;
      journal.entry({start, cause, 0, "", ""});
    }
    const std::string entry = journal.entry(h);
    std::fwrite(entry.data(), 1, entry.size(), stdout);
    return 0;
  }
  if (!opt.count("output")) return usage();
  Fleet fleet;
  // The receiver's shape: the fixed scenarios mix in no other units unless told to.
  rdma_journal_gen::ReceiverShape shape;
  shape.seed = seed;
  shape.sparse = number("sparse", 0) != 0;
  shape.archives = std::max<uint64_t>(number("archives", 1), 1);
  shape.jobs = static_cast<unsigned>(std::max<uint64_t>(
      number("jobs", static_cast<uint64_t>(::sysconf(_SC_NPROCESSORS_ONLN))), 1));
  shape.other_units = opt.count("other-units") ? std::strtod(opt["other-units"].c_str(), nullptr)
                      : opt.count("scenario")  ? 0
                                               : rdma_journal_gen::kDefaultOtherUnits;
  if (!(shape.other_units >= 0)) return usage();
  if (opt["scenario"] == "incidents") {
    fleet = incidents_scenario(start);
  } else if (opt["scenario"] == "many-hosts") {
    fleet = many_hosts_scenario(number("hosts", 200), start);
  } else if (opt["scenario"] == "flapping") {
    fleet = flapping_scenario(start);
  } else if (opt.count("hosts") && opt.count("records")) {
    fleet = busy_fleet(number("hosts", 1), number("records", 1), start, seed,
                       static_cast<int64_t>(number("days", 1)));
  } else {
    return usage();
  }
  if (!write_fleet(fleet, opt["output"], number("copies", 0), shape)) return 1;
  std::printf("%zu hosts, %zu records", fleet.hosts.size(), fleet.records);
  if (shape.other_units > 0 || shape.archives > 1) {
    size_t other = 0;
    for (const auto& list : fleet.happenings)
      other += rdma_journal_gen::other_units_count(shape, list.size());
    std::printf(", %zu entries of other units, %zu files a host at most", other, shape.archives);
  }
  std::printf("\n");
  return 0;
}
