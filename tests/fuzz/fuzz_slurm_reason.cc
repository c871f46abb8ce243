// Fuzzes what rdma-eventd-slurm reads back from Slurm (slurm/node_state.cc, slurm/policy.cc):
// `scontrol show node -o` output, whose Reason= may hold anything an admin typed and is followed
// by Comment= and Extra=, and the ports our own reason names, which decide whether a drain may
// be resumed. Beyond "no crash, no leak, no undefined behaviour", it checks:
//  - a node that parses has the name asked for, or (found by its NodeHostName) a non-empty
//    NodeName without a space, a base state without '+', no empty flag, and a reason of one
//    line;
//  - a reason of one line without ']' written as Slurm writes it, with or without a Comment= and
//    an Extra= after it, reads back exactly;
//  - every port ports_in_reason names is DEVICE/NUMBER and is in the reason;
//  - a drain reason made of the input's ports is at most 200 bytes and names back, in order,
//    exactly the ports it shows.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "node_state.h"
#include "policy.h"

namespace {

using rdma_eventd::HealthReply;
using namespace rdma_eventd_slurm;

constexpr std::string_view kPrefix = "rdma-eventd:";

void check_node(std::string_view output) {
  NodeState s;
  if (parse_node_state(output, "n1", s) != NodeParse::kOk) return;
  const std::string input(output);
  FUZZ_CHECK(s.name == "n1" || (input.find("NodeHostName=n1") != std::string::npos &&
                                !s.name.empty() && s.name.find(' ') == std::string::npos),
             input);
  FUZZ_CHECK(s.base.find('+') == std::string::npos, input);
  for (const std::string& f : s.flags)
    FUZZ_CHECK(!f.empty() && f.find('+') == std::string::npos, input);
  FUZZ_CHECK(s.reason.find('\n') == std::string::npos, input);
}

void check_reason_round_trip(std::string_view text) {
  std::string reason(text.substr(0, text.find('\n')));
  while (!reason.empty() && (reason.back() == ' ' || reason.back() == '\r'))
    reason.pop_back();
  if (reason.find(']') != std::string::npos || reason.find('\r') != std::string::npos) return;
  for (const char* tail :
       {"", " Comment=rack 7 [ops@x]", " Extra={\"a\": 1} x", " Comment=a Extra=b"}) {
    const std::string line = "NodeName=n1 Arch=x86_64 State=IDLE+DRAIN Reason=" + reason +
                             " [root@2026-11-28T10:26:43]" + tail + "\n";
    NodeState s;
    FUZZ_CHECK(parse_node_state(line, "n1", s) == NodeParse::kOk, line);
    FUZZ_CHECK(s.reason == reason, line + "  read: " + s.reason);
  }
}

void check_ports_in_reason(std::string_view text) {
  const std::string reason = std::string(kPrefix) + std::string(text);
  for (const std::string& name : ports_in_reason(reason, kPrefix)) {
    const size_t slash = name.rfind('/');
    FUZZ_CHECK(slash != std::string::npos && slash > 0 && slash + 1 < name.size(), name);
    FUZZ_CHECK(name.find_first_not_of("0123456789", slash + 1) == std::string::npos, name);
    FUZZ_CHECK(reason.find(name) != std::string::npos, name);
  }
}

// Ports from the input: a verdict, a device name of [a-z0-9_] and a port number per 3 bytes.
void check_drain_reason(const uint8_t* data, size_t size) {
  static const char* const kVerdicts[] = {"degraded", "down", "flapping", "gone", "fatal"};
  std::vector<HealthReply::Port> ports;
  std::vector<std::string> missing;
  for (size_t i = 0; i + 3 <= size && ports.size() + missing.size() < 64; i += 3) {
    std::string device = "d";
    for (uint8_t b = data[i + 1]; b; b /= 37)
      device += "abcdefghijklmnopqrstuvwxyz0123456789_"[b % 37];
    if (data[i] % 6 == 5) {
      missing.push_back(device + "/" + std::to_string(data[i + 2]));
      continue;
    }
    HealthReply::Port p;
    p.device = device;
    p.port = data[i + 2];
    p.health = kVerdicts[data[i] % 5];
    p.reason = "why (" + std::to_string(i) + ")";
    p.downs_in_window = data[i + 2];
    p.window_s = data[i + 1] * 60u;
    p.counted = data[i] % 7 != 0;
    ports.push_back(p);
  }
  const std::string reason = drain_reason(std::string(kPrefix), ports, missing);
  FUZZ_CHECK(reason.size() <= kMaxReasonBytes, reason);
  FUZZ_CHECK(reason.starts_with(kPrefix), reason);
  const std::vector<std::string> named = ports_in_reason(reason, kPrefix);
  size_t items = 0;
  const size_t more = reason.rfind(" more");
  const bool cut = more != std::string::npos && more + 5 == reason.size();
  for (const std::string& name : named)
    FUZZ_CHECK(reason.find(name + " ") != std::string::npos, reason);
  items = named.size();
  if (!cut) FUZZ_CHECK(items == ports.size() + missing.size(), reason);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_node(text);
  check_reason_round_trip(text);
  check_ports_in_reason(text);
  check_drain_reason(data, size);
  return 0;
}
