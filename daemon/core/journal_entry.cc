#include "core/journal_entry.h"

#include <array>
#include <cstdio>

namespace rdma_eventd::daemon {
namespace {

// One per EventKind, in enum order. Never change one: they are how the catalog and people's
// saved queries find these entries.
constexpr std::array<std::string_view, kEventKindCount> kMessageIds = {
    "260f624ee6044c27932423370eae1bdf",  // port_active
    "11b9171c80eb4233a8a8a39e9b93196c",  // port_err
    "9f91adefcf764eae8b3d118b506ee0ec",  // lid_change
    "8c2639c3c49142e7a021a6f9189dfdd1",  // pkey_change
    "cba45367082048afbd7d2b74e1dc06a6",  // sm_change
    "6f201cbacbcf41488fcb0247c2b0c5f6",  // client_reregister
    "19b3e41016e34da9be1efc974e1deb2b",  // gid_change
    "8ef99d5474244c868d83f6115d93aa40",  // device_fatal
    "d84bfe7134a342648803289e9a296a3f",  // unknown
    "0b30106622d24a9f8b5c288b3e62c4b1",  // device_added
    "fac2b940c46c450bbe58c2d204c1b595",  // device_removed
    "bfe7bc4cfe2a4e45acd0c613f8ceeab2",  // device_renamed
    "e6227d3293874a9888ff929df5645b9e",  // device_recovered
    "bd24b13a96184d4ba91cb1caa7808252",  // port_state
};

std::string rate_text(const PortInfo& p) {
  if (p.lanes == 0 || p.speed == LinkSpeed::kUnknown) return "unknown rate";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g Gb/s %uX %s", p.rate_gbps(), p.lanes,
                std::string(link_speed_display(p.speed)).c_str());
  return buf;
}

std::string state_text(PortState s) {
  return std::string(port_state_display(s));
}

std::string transition(const PortInfo& before, const PortInfo& after) {
  return "(" + state_text(before.state) + " -> " + state_text(after.state) + ")";
}

std::string gid_text(const GidEntry& g) {
  std::string s = g.gid + " (" + std::string(gid_type_display(g.type));
  if (!g.netdev.empty()) s += ", " + g.netdev;
  return s + ") at index " + std::to_string(g.index);
}

template <typename Entry, typename Text>
std::string list_changes(const std::vector<Entry>& added, const std::vector<Entry>& removed,
                         Text text) {
  std::string s;
  auto append = [&](std::string_view verb, const std::vector<Entry>& entries) {
    if (entries.empty()) return;
    if (!s.empty()) s += "; ";
    s += verb;
    s += ' ';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) s += ", ";
      s += text(entries[i]);
    }
  };
  append("added", added);
  append("removed", removed);
  return s.empty() ? "no entry differs from the last known table" : s;
}

std::string describe_port(const Record& r) {
  const PortInfo& now = *r.port_info;
  const PortInfo& was = r.previous.value_or(now);
  const std::string where = r.device + " port " + std::to_string(r.port) + ": ";
  switch (r.event) {
    case EventKind::kPortErr:
      if (now.state == PortState::kActive) {
        // The port was up again by the time the event was read: say so, don't pretend.
        return where + "link down, already back up when queried " + transition(was, now) + ", " +
               rate_text(now);
      }
      return where + "link down " + transition(was, now) + ", was " + rate_text(was);
    case EventKind::kPortActive:
      return where + "link up " + transition(was, now) + ", " + rate_text(now) +
             (now.link_layer == LinkLayer::kInfiniband ? ", LID " + std::to_string(now.lid) : "");
    case EventKind::kLidChange:
      return where + "LID changed " + std::to_string(was.lid) + " -> " + std::to_string(now.lid);
    case EventKind::kSmChange:
      return where + "subnet manager changed, SM LID " + std::to_string(was.sm_lid) + " -> " +
             std::to_string(now.sm_lid) + " (SL " + std::to_string(now.sm_sl) + ")";
    case EventKind::kClientReregister:
      return where + "subnet manager (LID " + std::to_string(now.sm_lid) +
             ") asked clients to re-register";
    case EventKind::kGidChange:
      return where + "GID table changed: " +
             list_changes(r.gids_added, r.gids_removed,
                          [](const GidEntry& g) { return gid_text(g); });
    case EventKind::kPkeyChange:
      return where + "P_Key table changed: " +
             list_changes(r.pkeys_added, r.pkeys_removed, [](const PkeyEntry& p) {
               return format_pkey(p.pkey) + " at index " + std::to_string(p.index);
             });
    case EventKind::kPortState:
      return where + state_text(now.state) + ", " + rate_text(now) +
             (now.link_layer == LinkLayer::kInfiniband ? ", LID " + std::to_string(now.lid) : "") +
             (was == now ? ""
                         : ", was " + state_text(was.state) + " " + rate_text(was) +
                               (was.link_layer == LinkLayer::kInfiniband
                                    ? ", LID " + std::to_string(was.lid)
                                    : ""));
    default:
      break;
  }
  return where + "async event type " + std::to_string(r.event_type) +
         " (unknown to this version), port " + state_text(now.state) + ", " + rate_text(now);
}

// " port 1 ACTIVE 200 Gb/s 4X HDR, port 2 DOWN"
std::string last_known(const std::vector<PortInfo>& ports) {
  if (ports.empty()) return " no ports";
  std::string s;
  for (size_t i = 0; i < ports.size(); ++i) {
    const PortInfo& p = ports[i];
    s += i ? ", port " : " port ";
    s += std::to_string(p.port) + " " + state_text(p.state);
    if (p.state == PortState::kActive) s += " " + rate_text(p);
  }
  return s;
}

// "850 ms", "12.5 s", "3 min 20 s"
std::string duration_text(uint64_t ms) {
  char buf[64];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%llu ms", static_cast<unsigned long long>(ms));
  } else if (ms < 60000) {
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof buf, "%llu min %llu s", static_cast<unsigned long long>(ms / 60000),
                  static_cast<unsigned long long>(ms % 60000 / 1000));
  }
  return buf;
}

}  // namespace

std::string_view message_id(EventKind kind) {
  return kMessageIds[static_cast<size_t>(kind)];
}

std::string describe(const Record& r) {
  switch (r.event) {
    case EventKind::kDeviceFatal:
      return r.device + ": device fatal error, last known:" + last_known(r.ports);
    case EventKind::kDeviceRemoved:
      return r.device + ": device removed, last known:" + last_known(r.ports);
    case EventKind::kDeviceAdded:
      return r.device + ": device added (node GUID " + r.node_guid + ")";
    case EventKind::kDeviceRenamed:
      return r.old_name + ": device renamed to " + r.device;
    case EventKind::kDeviceRecovered:
      return r.device + ": device recovered after " + duration_text(r.downtime_ms) +
             " (fatal error at seq " + std::to_string(r.fatal_seq) + ")";
    default:
      break;
  }
  if (r.port_info) return describe_port(r);
  return r.device + ": async event type " + std::to_string(r.event_type) +
         " (unknown to this version), element " + std::to_string(r.port);
}

std::vector<std::string> journal_fields(const Record& r, std::string_view json,
                                        std::string_view identifier) {
  std::vector<std::string> f;
  f.reserve(16);
  f.push_back("MESSAGE=" + describe(r));
  f.push_back("PRIORITY=" + std::to_string(syslog_priority(r.severity)));
  f.push_back("MESSAGE_ID=" + std::string(message_id(r.event)));
  f.push_back("SYSLOG_IDENTIFIER=" + std::string(identifier));
  f.push_back("RDMA_EVENT=" + std::string(event_name(r.event)));
  f.push_back("RDMA_EVENT_TYPE=" + std::to_string(r.event_type));
  f.push_back("RDMA_SEVERITY=" + std::string(severity_name(r.severity)));
  f.push_back("RDMA_DEVICE=" + r.device);
  f.push_back("RDMA_NODE_GUID=" + r.node_guid);
  f.push_back("RDMA_PORT=" + std::to_string(r.port));
  if (r.port_info) {
    f.push_back("RDMA_LINK_LAYER=" + std::string(link_layer_name(r.port_info->link_layer)));
    f.push_back("RDMA_PORT_STATE=" + std::string(port_state_name(r.port_info->state)));
    f.push_back("RDMA_LID=" + std::to_string(r.port_info->lid));
  }
  f.push_back("RDMA_SEQ=" + std::to_string(r.seq));
  f.push_back("RDMA_STREAM=" + r.stream);
  f.push_back("RDMA_RECORD=" + std::string(json));
  return f;
}

}  // namespace rdma_eventd::daemon
