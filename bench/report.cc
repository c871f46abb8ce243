// `report`: the results file -> docs/benchmarks.md. The machine comes from /proc and
// /etc; the command, the date and the build from run.sh. A hand-written part at the end of the
// file it replaces (from kHandWrittenMarker on) is kept.
#include "report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "commands.h"
#include "util.h"

namespace rdma_eventd::bench {

using nlohmann::json;

std::optional<Spread> spread_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return Spread{median, v.front(), v.back(), n};
}

Results::Results(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BenchError("cannot read " + path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json j = json::parse(line);
    const std::string figure = j.value("figure", "");
    auto it = std::find_if(figures_.begin(), figures_.end(),
                           [&](const auto& f) { return f.first == figure; });
    if (it == figures_.end()) it = figures_.insert(figures_.end(), {figure, {}});
    it->second.push_back(std::move(j));
  }
  for (auto& [name, runs] : figures_)
    std::stable_sort(runs.begin(), runs.end(), [](const json& a, const json& b) {
      return a.value("run", 0) < b.value("run", 0);
    });
}

const std::vector<json>& Results::of(const std::string& figure) const {
  static const std::vector<json> kNone;
  for (const auto& [name, runs] : figures_)
    if (name == figure) return runs;
  return kNone;
}

std::vector<double> Results::values(const std::string& figure, const std::string& key) const {
  std::vector<double> v;
  for (const json& j : of(figure)) {
    const json* at = &j;
    for (const std::string& part : split(key, '.')) {
      if (!at->is_object() || !at->contains(part)) {
        at = nullptr;
        break;
      }
      at = &(*at)[part];
    }
    if (at && at->is_number()) v.push_back(at->get<double>());
  }
  return v;
}

std::optional<Spread> Results::ratio(const std::string& a, const std::string& b,
                                     const std::string& key) const {
  std::vector<double> v;
  for (const json& x : of(a))
    for (const json& y : of(b))
      if (x.value("run", 0) == y.value("run", 0) && x.contains(key) && y.contains(key) &&
          y[key].get<double>() > 0)
        v.push_back(x[key].get<double>() / y[key].get<double>());
  return spread_of(v);
}

double Results::total(const std::string& figure, const std::string& key) const {
  double t = 0;
  for (double x : values(figure, key))
    t += x;
  return t;
}

json Results::first(const std::string& figure) const {
  const auto& runs = of(figure);
  return runs.empty() ? json() : runs.front();
}

std::string grouped(double v) {
  const long long n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {
std::string number(double v, int decimals, bool group) {
  return group ? grouped(v) : fixed(v, decimals);
}
}  // namespace

std::string median_only(const std::optional<Spread>& s, int decimals, bool group) {
  return s ? "**" + number(s->median, decimals, group) + "**" : "–";
}

std::string with_spread(const std::optional<Spread>& s, int decimals, bool group) {
  if (!s) return "not measured";
  return "**" + number(s->median, decimals, group) + "** (" + spread_only(s, decimals, group) + ")";
}

std::string spread_only(const std::optional<Spread>& s, int decimals, bool group) {
  if (!s) return "–";
  return number(s->min, decimals, group) + "–" + number(s->max, decimals, group);
}

std::string met_text(std::optional<bool> met) {
  if (!met) return "not measured";
  return *met ? "yes" : "**no**";
}

void not_measured(std::ostringstream& out, std::vector<TargetRow>& targets, std::string figure,
                  std::string target) {
  out << "Not measured in this run.\n\n";
  targets.push_back({std::move(figure), "–", "–", std::move(target), met_text(std::nullopt)});
}

namespace {

// The "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal ...
std::vector<double> cpu_jiffies(const std::string& path) {
  std::ifstream in(path);
  std::string label;
  std::vector<double> v;
  in >> label;
  for (double x; v.size() < 8 && in >> x;)
    v.push_back(x);
  if (label != "cpu" || v.size() < 8) v.clear();
  return v;
}

// How busy the machine was over the run (all processes, not only the benchmark's), from
// /proc/stat then and now, and the load averages then and now.
std::string machine_load(const Args& a) {
  const auto then = cpu_jiffies(a.str("stat-start", ""));
  const auto now = cpu_jiffies("/proc/stat");
  if (then.empty() || now.empty()) return "";
  double total = 0;
  std::vector<double> d(8);
  for (size_t i = 0; i < 8; ++i) {
    d[i] = now[i] - then[i];
    total += d[i];
  }
  if (total <= 0) return "";
  const double idle = d[3] + d[4];
  std::ifstream load_then(a.str("loadavg-start", "")), load_now("/proc/loadavg");
  std::string l1, l5, n1, n5;
  load_then >> l1 >> l5;
  load_now >> n1 >> n5;
  return "| machine load | CPUs busy " + fixed((total - idle) / total * 100, 0) +
         "% of the time over the whole run (every process on the machine; steal " +
         fixed(d[7] / total * 100, 1) + "%); load average (1 min, 5 min) " + l1 + ", " + l5 +
         " at the start, " + n1 + ", " + n5 + " at the end |\n";
}

// The price of one system call over the runs (bench/syscall_cost.cc), and what sets it.
std::string syscall_row(const Results& r) {
  const auto s = r.spread("syscall", "read_ns");
  if (!s) return "";
  const nlohmann::json first = r.first("syscall");
  const std::string meltdown = first.value("meltdown", "");
  return "| system call | " + with_spread(s, 0, true) +
         " ns: a non-blocking `read()` of an empty pipe (median of " +
         std::to_string(first.value("read_ns_each", nlohmann::json::array()).size()) +
         " loops of " + grouped(first.value("calls", 0.0)) +
         " calls, per run); meltdown: " + (meltdown.empty() ? "unknown" : meltdown) +
         "; PCID: " + (first.value("pcid", false) ? "yes" : "no") +
         (first.value("hypervisor", false) ? "; under a hypervisor" : "") + " |\n";
}

std::string machine_table(const Args& a, const Results& r) {
  utsname u{};
  uname(&u);
  const double mem_kib = std::strtod(first_line_with("/proc/meminfo", "MemTotal").c_str(), nullptr);
  std::ostringstream t;
  t << "| | |\n|---|---|\n"
    << "| CPU | " << first_line_with("/proc/cpuinfo", "model name") << ", "
    << sysconf(_SC_NPROCESSORS_ONLN) << " cores |\n"
    << "| memory | " << fixed(mem_kib / 1024 / 1024, 1) << " GiB |\n"
    << "| kernel | Linux " << u.release << " (" << u.machine << ") |\n"
    << "| Debian | " << first_line_with("/etc/debian_version", "") << " ("
    << first_line_with("/etc/os-release", "PRETTY_NAME") << ") |\n"
    << "| build | " << a.str("build", "unknown") << " |\n"
    << "| date | " << a.str("date", "unknown") << " |\n"
    << "| command | `" << a.str("command", "bench/run.sh") << "` |\n"
    << "| runs | " << a.num("runs", 0)
    << ": every figure is the **median** of the runs, with the spread (min–max) |\n";
  t << syscall_row(r);
  t << machine_load(a);
  if (!a.str("note", "").empty()) t << "| note | " << a.str("note") << " |\n";
  return t.str();
}

// The line from which a report is written by hand: the analysis of measurements made apart from
// the runs (before and after a change, on another machine), which no run can regenerate.
constexpr std::string_view kHandWrittenMarker =
    "<!-- Written by hand from here on: bench/run.sh keeps this line and everything after it "
    "when it writes the report again. -->";

// What `path` holds from the marker line on (the marker included), exactly as it is there; or
// nothing when the file does not exist or has no such line.
std::string hand_written_part(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const size_t n = kHandWrittenMarker.size();
  for (size_t at = text.find(kHandWrittenMarker); at != std::string::npos;
       at = text.find(kHandWrittenMarker, at + 1)) {
    const bool whole_line =
        (at == 0 || text[at - 1] == '\n') && (at + n == text.size() || text[at + n] == '\n');
    if (whole_line) return text.substr(at);
  }
  return {};
}

}  // namespace

int cmd_report(int argc, char** argv) {
  const Args a(
      argc, argv,
      {"results", "out", "command", "date", "build", "runs", "note", "stat-start", "loadavg-start"},
      {});
  const Results r(a.str("results"));
  std::vector<TargetRow> targets;
  std::ostringstream body;
  storm_section(body, r, targets);
  latency_section(body, r, targets);
  fanout_section(body, r, targets);
  floor_section(body, r, targets);
  idle_section(body, r, targets);
  memory_section(body, r, targets);
  startup_section(body, r, targets);
  slow_query_section(body, r, targets);
  health_section(body, r, targets);

  std::ostringstream out;
  out << "# Benchmarks\n\n"
      << "<!-- Generated by bench/run.sh from its measurements, up to the line that says the "
         "rest is written by hand: run it again rather than editing. -->\n\n"
      << "What rdma-eventd costs and how fast it goes, measured against the RDMA device "
         "simulator (docs/simulator.md), side by side with rdma-core's `ibv_asyncwatch` and a "
         "bare read-and-ack loop on the same storms. No RDMA hardware is involved: the "
         "simulator's stand-in libibverbs delivers the events through a pipe per context, and "
         "its modelled query latency is 0 except in \"Slow queries\".\n\n"
      << "## Reproduce\n\n"
      << "One command, as root (it starts a private systemd-journald in a mount namespace of "
         "its own), from the top of the source tree:\n\n"
      << "```\n"
      << "sudo bench/run.sh                     # builds ./build, 5 runs, writes "
         "docs/benchmarks.md\n"
      << "sudo bench/run.sh --runs 3 --out FILE # fewer runs, another file\n"
      << "sudo bench/run.sh --smoke --out FILE  # 1 run, tiny counts: checks the harness (ctest -L "
         "bench)\n"
      << "```\n\n"
      << "`bench/run.sh --help` lists every option (the counts, `--only` to run some "
         "sections, `--profile` for perf profiles of the daemon in storms, `--instructions` "
         "for the instructions it runs per event, counted by callgrind). The numbers depend on "
         "the machine and on what else runs on it.\n\n"
      << "## This run\n\n"
      << machine_table(a, r) << "\n"
      << "## Targets\n\n"
      << "| figure | median | spread (min–max) | target | met |\n|---|---|---|---|---|\n";
  for (const TargetRow& t : targets)
    out << "| " << t.figure << " | " << t.median << " | " << t.spread << " | " << t.target << " | "
        << t.met << " |\n";
  out << "\n" << body.str();

  const std::string path = a.str("out");
  if (const std::string kept = hand_written_part(path); !kept.empty()) out << "\n" << kept;
  std::ofstream f(path);
  if (!f) throw BenchError("cannot write " + path);
  f << out.str();
  if (!f.flush()) throw BenchError("cannot write " + path);
  return 0;
}

}  // namespace rdma_eventd::bench
