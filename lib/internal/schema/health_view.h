// One reading of the daemon's health reply (docs/health.md) for every client that judges a host
// by it: rdma-eventctl health (its line, its --compact line and its exit status) and
// rdma-eventd-slurm. Which ports count, what "nothing to judge" means, the bad ports worst first
// in the daemon's own order of badness, and the bounded lists and durations their texts are
// made of. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/health_reply.h"

namespace rdma_eventd {

// The verdicts in the daemon's order of badness, each worse than the one before (its
// PortHealth; a unit test holds the two together).
inline constexpr std::array<std::string_view, 6> kVerdictsByBadness = {
    "healthy", "degraded", "down", "flapping", "gone", "fatal"};
// The verdict's place in that order; one this version does not know ranks worst of all.
int verdict_rank(std::string_view verdict);

struct HealthView {
  enum class Judgement {
    kUnknown,    // nothing to judge: health is off in the daemon, or no port is in service
    kHealthy,    // every port in service is healthy
    kUnhealthy,  // a port in service is not
  };
  Judgement judgement = Judgement::kUnknown;
  std::string unknown_why;  // kUnknown: why, for a person
  size_t counted = 0;       // ports in service
  // The ports in service that are not healthy: worst first, then by device and port. They
  // point into the reply the view was made from.
  std::vector<const HealthReply::Port*> bad;
  // The healthy ports in service whose link quality is not judged for a reason that lasts
  // (link_not_judged): healthy by their verdict, not judged clean. By device and port.
  std::vector<const HealthReply::Port*> not_judged;
};
HealthView view_health(const HealthReply& reply);

// Whether a port's link quality is not judged for a reason that lasts and that is a fault of the
// judging: its counters unreadable, failing, hung or pegged, its rate not known (docs/health.md,
// "Unknown is not clean"). Not a first read (at most one link_health.interval_s), a link that is
// down (its verdict says so), nor a port that has no such counters by its nature (rxe's, a RoCE
// netdev without FEC statistics): those are unknown in status and in the health reply only.
bool link_not_judged(const HealthReply::Port& p);

// "mlx5_0/1"
std::string port_name(const HealthReply::Port& p);
// `lead`, then the items (" a, b, c") as many as fit within max_bytes with room left for
// " +N more", which stands for the rest.
std::string bounded_list(std::string lead, const std::vector<std::string>& items, size_t max_bytes);
// A span as an operator reads it: 3600 -> "1h", 600 -> "10m", 90 -> "90s".
std::string short_duration(uint64_t seconds);

}  // namespace rdma_eventd
