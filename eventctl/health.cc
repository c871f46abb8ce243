// rdma-eventctl health: the host's port health in one line and an exit status, for node health
// checkers (Slurm's NHC, node-problem-detector's custom plugins) that read exactly those.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "rdma_eventd/record.h"
#include "schema/health_reply.h"
#include "schema/health_view.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kHealthHelp = R"(Usage: rdma-eventctl health [OPTIONS]

Prints the health of the host's RDMA ports as rdma-eventd judges them (docs/health.md) in one
line: the host's verdict (the worst of its ports in service), then the ports that are not
healthy, worst first, with their verdict, reason and since when; then the healthy ports whose
link quality is not judged for a reason that lasts (their error counters failing, unreadable,
hung or pegged, or their rate not known: 'link quality not judged: mlx5_0/1 (read_hung)'),
which are healthy by their verdict but not judged clean, and do not change the exit status.
Ports down that were never up are not in service and do not count.

Options:
      --json           print the daemon's health reply as it is (one JSON object)
      --compact        at most 80 bytes: the verdict and the bad ports, without reasons
                       or times (node-problem-detector keeps 80 bytes of a check's output)
      --socket PATH    the daemon's socket
  -h, --help           this text

Exit status: 0 healthy, 1 a port in service is not healthy, 2 unknown (the daemon cannot be
reached, refused the request or judges no port: health.enabled is off, or no port is in
service), 64 bad command line.
)";

namespace {

constexpr int kExitProblem = 1;
constexpr int kExitUnknown = 2;

std::string plural(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "; 1 not in service (never up)", or "".
std::string not_in_service(const HealthReply& h) {
  return h.not_counted ? "; " + std::to_string(h.not_counted) + " not in service (never up)" : "";
}

// "; link quality not judged: mlx5_0/1 (read_hung)", or "": healthy ports not judged clean.
std::string not_judged(const HealthView& v) {
  if (v.not_judged.empty()) return "";
  std::string out = "; link quality not judged:";
  for (size_t i = 0; i < v.not_judged.size(); ++i) {
    const HealthReply::Port& p = *v.not_judged[i];
    out += (i ? ", " : " ") + port_name(p) + " (" + p.link_quality_reason + ")";
  }
  return out;
}

// What every line starts with: the verdict, and how many ports are not healthy.
// "flapping: 1 of 4 ports not healthy:"; kUnhealthy only.
std::string unhealthy_lead(const HealthView& v) {
  return v.bad.front()->health + ": " + std::to_string(v.bad.size()) + " of " +
         plural(v.counted, "port") + " not healthy:";
}

// "flapping: 1 of 4 ports not healthy: mlx5_0/1 flapping (flaps_in_window) since ...", worst
// first.
std::string summary_line(const HealthReply& h, const HealthView& v) {
  switch (v.judgement) {
    case HealthView::Judgement::kUnknown:
      return "unknown: " + v.unknown_why + (h.enabled ? not_in_service(h) : "");
    case HealthView::Judgement::kHealthy:
      return "healthy: " + plural(v.counted, "port") + " healthy" + not_in_service(h) +
             not_judged(v);
    case HealthView::Judgement::kUnhealthy:
      break;
  }
  std::string line = unhealthy_lead(v);
  for (size_t i = 0; i < v.bad.size(); ++i) {
    const HealthReply::Port& p = *v.bad[i];
    line += (i ? ", " : " ") + port_name(p) + " " + p.health + " (" + p.reason + ") since " +
            format_rfc3339_us(p.since_us);
  }
  return line + not_in_service(h) + not_judged(v);
}

// "fatal: 3 of 4 ports not healthy: mlx5_1/1 fatal, mlx5_1/2 fatal +1 more", worst first, within
// kCompactBytes whatever the number of ports.
constexpr size_t kCompactBytes = 80;
std::string compact_line(const HealthView& v) {
  switch (v.judgement) {
    case HealthView::Judgement::kUnknown:
      return ("unknown: " + v.unknown_why).substr(0, kCompactBytes);
    case HealthView::Judgement::kHealthy:
      return "healthy: " + plural(v.counted, "port") + " healthy";
    case HealthView::Judgement::kUnhealthy:
      break;
  }
  std::vector<std::string> items;
  for (const HealthReply::Port* p : v.bad)
    items.push_back(port_name(*p) + " " + p->health);
  return bounded_list(unhealthy_lead(v), items, kCompactBytes).substr(0, kCompactBytes);
}

int exit_status(const HealthView& v) {
  switch (v.judgement) {
    case HealthView::Judgement::kUnknown:
      return kExitUnknown;
    case HealthView::Judgement::kHealthy:
      return kExitOk;
    case HealthView::Judgement::kUnhealthy:
      break;
  }
  return kExitProblem;
}

}  // namespace

int run_health(const Global& g, int argc, char** argv) {
  Global global = g;
  bool json = false;
  bool compact = false;
  const auto args =
      parse_command_line(argc, argv, kHealthHelp, global,
                         {flag_option("json", json), flag_option("compact", compact)});
  if (!args) return kExitOk;
  expect_no_arguments(*args);

  auto client = connect_or_report(global, kRequestTimeout);
  if (!client) {
    std::puts("unknown: rdma-eventd cannot be reached");
    return kExitUnknown;
  }
  Message reply;
  const ClientStatus s = client->call(Request{Op::kHealth}, kRequestTimeout, reply);
  if (s != ClientStatus::kOk) {
    report_failure(global, s, *client);
    std::puts("unknown: rdma-eventd did not answer the health request");
    return kExitUnknown;
  }
  std::string why;
  const auto health = health_from_json(reply.text(), &why);
  if (!health) {
    std::fprintf(stderr, "%s: unreadable health reply: %s\n", global.program.c_str(), why.c_str());
    std::puts("unknown: unreadable health reply");
    return kExitUnknown;
  }
  const HealthView view = view_health(*health);
  if (json) {
    std::puts(reply.text().c_str());
  } else {
    std::puts(compact ? compact_line(view).c_str() : summary_line(*health, view).c_str());
  }
  return exit_status(view);
}

}  // namespace rdma_eventctl
