// rdma-eventd-slurm's configuration (docs/scheduler.md): a small JSON object, every key
// optional, every key checked. Pure: reading the file and `hostname -s` are the caller's.
#pragma once

#include <array>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace rdma_eventd_slurm {

inline constexpr const char* kDefaultConfigPath = "/etc/rdma-eventd/slurm.json";
inline constexpr size_t kMaxPrefixBytes = 64;

// The verdicts a node may be drained for (docs/health.md); "healthy" is none of them.
inline constexpr std::array<std::string_view, 5> kDrainableVerdicts = {"degraded", "down",
                                                                       "flapping", "gone", "fatal"};
// The reasons of `degraded` that drain_on may also name: the link-quality faults (docs/health.md,
// "Link quality") and the adapter's devlink health reporters' ("devlink health"). A port
// degraded for one of them has a link that loses bits or retrains, or an adapter whose firmware
// or queues report errors, which a site may drain for while a port merely slower than expected
// is left in service.
inline constexpr std::array<std::string_view, 5> kDrainableReasons = {
    "bit_errors", "link_recoveries", "transport_errors", "firmware_errors", "queue_errors"};
// What drain_on may name besides: a port in service whose link quality is not judged, for a
// reason that lasts and is a fault of the judging (its counters unreadable, failing, hung or
// pegged, its rate not known; rdma_eventd::link_not_judged): not "judged clean", whatever its
// verdict. Off by default.
inline constexpr std::string_view kNotJudged = "not_judged";

// How many nodes the followers may hold drained at once (docs/scheduler.md, "The drain limit"):
// a drain that would go past it waits, so that an event of the whole fabric (a spine's reboot, an
// SM failover bouncing every link) does not take the cluster out of service.
struct DrainLimit {
  enum Kind {
    kOff,      // no limit
    kNodes,    // at most `value` nodes drained with our reason prefix
    kPercent,  // at most `value` % of the nodes of this node's partitions (at least one node)
  };
  Kind kind = kPercent;
  unsigned value = 10;
  friend bool operator==(const DrainLimit&, const DrainLimit&) = default;
};

// "10%", "5 nodes", "off": as the configuration and the log say it.
std::string limit_text(const DrainLimit& limit);

struct Config {
  std::string node_name;  // "" until filled: `hostname -s`
  std::string reason_prefix = "rdma-eventd:";
  // Verdicts, and reasons of kDrainableReasons ("degraded for that reason").
  std::set<std::string> drain_on = {"fatal", "flapping", "gone", "down"};
  unsigned reconcile_interval_s = 60;
  unsigned scontrol_timeout_s = 10;
  std::string scontrol = "scontrol";  // a path, or a name looked up on PATH
  std::string sinfo;                  // "": sinfo beside scontrol (or on PATH, as scontrol is)
  std::string socket;                 // "" : $RDMA_EVENTD_SOCKET, else the default path
  bool drain_when_daemon_unreachable = false;
  DrainLimit drain_limit;
  // A new drain waits a random time up to this first, so that the nodes of a fabric-wide event
  // count each other's drains rather than all finding none at once.
  unsigned drain_splay_s = 30;
  // Where the follower keeps what survives a reboot of the node: the identity (node GUID and
  // port number) of every port its drain is for (drain.json; drain_record.h).
  std::string state_directory = "/var/lib/rdma-eventd-slurm";
  friend bool operator==(const Config&, const Config&) = default;
};

// Parses the file's text. On error returns nullopt and *error names the key and what is wrong
// ("unknown key 'reason_prefx' (did you mean 'reason_prefix'?)").
std::optional<Config> parse_config(std::string_view text, std::string* error);

// The sinfo program to run: `sinfo` of the configuration, else the one in scontrol's directory
// when scontrol is a path, else "sinfo" on PATH.
std::string sinfo_program(const Config& config);

// The key of `known` closest to `key` when it is a likely typo (edit distance at most 2 or
// a third of the key), else "".
std::string nearest_key(std::string_view key);

}  // namespace rdma_eventd_slurm
