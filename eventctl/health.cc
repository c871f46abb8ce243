// rdma-eventctl health: the host's port health in one line and an exit status, for node health
// checkers (Slurm's NHC, node-problem-detector's custom plugins) that read exactly those.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "commands.h"
#include "rdma_eventd/record.h"
#include "schema/health_reply.h"

namespace rdma_eventctl {

using namespace rdma_eventd;

const char* const kHealthHelp = R"(Usage: rdma-eventctl health [OPTIONS]

Prints the health of the host's RDMA ports as rdma-eventd judges them (docs/health.md) in one
line: the host's verdict (the worst of its ports in service), then the ports that are not
healthy with their verdict, reason and since when. Ports down that were never up are not in
service and do not count.

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

// "flapping: 1 of 4 ports not healthy: mlx5_0/1 flapping (flaps_in_window) since ..."
std::string summary_line(const HealthReply& h) {
  if (!h.enabled) return "unknown: port health is off in rdma-eventd (health.enabled)";
  size_t counted = 0;
  std::string problems;
  for (const HealthReply::Port& p : h.ports) {
    if (!p.counted) continue;
    ++counted;
    if (p.health == "healthy") continue;
    problems += (problems.empty() ? "" : ", ") + p.device + "/" + std::to_string(p.port) + " " +
                p.health + " (" + p.reason + ") since " + format_rfc3339_us(p.since_us);
  }
  const std::string not_in_service =
      h.not_counted ? "; " + std::to_string(h.not_counted) + " not in service (never up)" : "";
  if (counted == 0) return "unknown: no RDMA port in service" + not_in_service;
  if (problems.empty()) return "healthy: " + plural(counted, "port") + " healthy" + not_in_service;
  size_t bad = 0;
  for (const HealthReply::Port& p : h.ports)
    bad += p.counted && p.health != "healthy";
  return h.host + ": " + std::to_string(bad) + " of " + plural(counted, "port") +
         " not healthy: " + problems + not_in_service;
}

// "fatal: 3 of 4 ports not healthy: mlx5_1/1 fatal, mlx5_1/2 fatal +1 more", worst first, within
// kCompactBytes whatever the number of ports.
constexpr size_t kCompactBytes = 80;
std::string compact_line(const HealthReply& h) {
  if (!h.enabled) return "unknown: port health is off in rdma-eventd";
  std::vector<const HealthReply::Port*> bad;
  size_t counted = 0;
  for (const HealthReply::Port& p : h.ports) {
    if (!p.counted) continue;
    ++counted;
    if (p.health != "healthy") bad.push_back(&p);
  }
  if (counted == 0) return "unknown: no RDMA port in service";
  if (bad.empty()) return "healthy: " + plural(counted, "port") + " healthy";
  // The worst first, so that what the 80 bytes keep is what matters most.
  const auto rank = [](const std::string& health) {
    static const char* const kWorstFirst[] = {"gone", "fatal", "flapping", "down", "degraded"};
    return std::find(std::begin(kWorstFirst), std::end(kWorstFirst), health) -
           std::begin(kWorstFirst);
  };
  std::stable_sort(bad.begin(), bad.end(), [&rank](const auto* a, const auto* b) {
    return rank(a->health) < rank(b->health);
  });
  std::string line = h.host + ": " + std::to_string(bad.size()) + " of " + plural(counted, "port") +
                     " not healthy:";
  size_t shown = 0;
  for (const HealthReply::Port* p : bad) {
    const std::string item =
        (shown ? ", " : " ") + p->device + "/" + std::to_string(p->port) + " " + p->health;
    const size_t rest = bad.size() - shown - 1;
    const size_t more = rest ? (" +" + std::to_string(rest) + " more").size() : 0;
    if (line.size() + item.size() + more > kCompactBytes) break;
    line += item;
    ++shown;
  }
  if (shown < bad.size()) line += " +" + std::to_string(bad.size() - shown) + " more";
  return line.substr(0, kCompactBytes);
}

int exit_status(const HealthReply& h) {
  if (!h.enabled || h.host == "unknown") return kExitUnknown;
  return h.host == "healthy" ? kExitOk : kExitProblem;
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

  constexpr auto kTimeout = std::chrono::seconds(10);
  auto client = connect_or_report(global, kTimeout);
  if (!client) {
    std::puts("unknown: rdma-eventd cannot be reached");
    return kExitUnknown;
  }
  Message reply;
  const ClientStatus s = client->call(Request{Op::kHealth}, kTimeout, reply);
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
  if (json) {
    std::puts(reply.text().c_str());
  } else {
    std::puts(compact ? compact_line(*health).c_str() : summary_line(*health).c_str());
  }
  return exit_status(*health);
}

}  // namespace rdma_eventctl
