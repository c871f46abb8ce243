#include "core/ethtool_wire.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>
#include <variant>

#include "core/netlink_wire.h"

namespace rdma_eventd::daemon::ethtool {
namespace {

using netlink_wire::Attr;
using netlink_wire::for_each_attr;
using netlink_wire::load;
constexpr size_t kGenlHeader = GENL_HDRLEN;        // 4
constexpr size_t kMaxGroupName = GENL_NAMSIZ - 1;  // family and group names: the kernel's limit

// Remembers which attribute types of one nest were taken, so that a repeated one is skipped
// (the first counts) whatever it holds. Types above 63 are not remembered: none is decoded.
class Seen {
 public:
  bool first(uint16_t type) {
    if (type >= 64) return true;
    const uint64_t bit = uint64_t{1} << type;
    const bool fresh = !(seen_ & bit);
    seen_ |= bit;
    return fresh;
  }

 private:
  uint64_t seen_ = 0;
};

// A FEC statistic: an array of host-endian u64, [] (not reported), [total], or [sum of the
// lanes, lane 0, ...]. Only the total is kept.
bool fec_stat(const Attr& a, std::optional<uint64_t>& out, const char* what, std::string& problem) {
  if (a.payload.size() % sizeof(uint64_t) != 0) {
    problem = std::string(what) + " has " + std::to_string(a.payload.size()) +
              " bytes, not a whole number of u64";
    return false;
  }
  if (a.payload.empty()) {
    out.reset();
  } else {
    out = load<uint64_t>(a.payload.data());
  }
  return true;
}

bool decode_fec_stats(std::span<const uint8_t> bytes, PhyStats& s, std::string& problem) {
  Seen seen;
  return for_each_attr(bytes, problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    switch (a.type) {
      case kFecStatCorrected:
        return fec_stat(a, s.fec_corrected_blocks, "corrected blocks", problem);
      case kFecStatUncorrectable:
        return fec_stat(a, s.fec_uncorrectable_blocks, "uncorrectable blocks", problem);
      case kFecStatCorrectedBits:
        return fec_stat(a, s.fec_corrected_bits, "corrected bits", problem);
      default:
        return true;  // the pad, and the histogram of newer kernels
    }
  });
}

// The reply header: the netdev's ifindex (required) and name.
bool decode_header(std::span<const uint8_t> bytes, Message& m, bool& has_index) {
  Seen seen;
  return for_each_attr(bytes, m.problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    if (a.type == kHeaderDevIndex) {
      has_index = true;
      return netlink_wire::number_attr(a, m.ifindex, "ifindex", m.problem);
    }
    if (a.type == kHeaderDevName)
      return netlink_wire::string_attr(a, m.ifname, "netdev name", kMaxDevName, m.problem);
    return true;
  });
}

void decode_fec(std::span<const uint8_t> attrs, Message& m) {
  PhyStats s;
  bool header = false;
  bool has_index = false;
  Seen seen;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    switch (a.type) {
      case kFecHeader:
        header = true;
        return decode_header(a.payload, m, has_index);
      case kFecActive: {
        uint32_t bit = 0;
        if (!netlink_wire::number_attr(a, bit, "active FEC", m.problem)) return false;
        s.fec_mode = fec_mode_name(bit);
        return true;
      }
      case kFecStats:
        return decode_fec_stats(a.payload, s, m.problem);
      default:
        return true;  // the configured modes and auto: not what link quality needs
    }
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  const char* missing = !header ? "header" : !has_index ? "ifindex" : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  m.kind = MessageKind::kFec;
  m.stats = std::move(s);
}

// One ETHTOOL_A_STATS_GRP_STAT: exactly one u64 whose attribute type is the statistic's index.
bool decode_stat(std::span<const uint8_t> bytes, std::optional<uint64_t>& symbol_errors,
                 std::string& problem) {
  size_t n = 0;
  return for_each_attr(bytes, problem, [&](const Attr& a) {
    if (++n > 1) return true;  // stat_put writes one; more would be another kernel's
    if (a.type != kStatEthPhySymbolErrors) return true;
    if (a.payload.size() != sizeof(uint64_t)) {
      problem =
          "SymbolErrorDuringCarrier has " + std::to_string(a.payload.size()) + " bytes, not 8";
      return false;
    }
    if (!symbol_errors) symbol_errors = load<uint64_t>(a.payload.data());
    return true;
  });
}

// One ETHTOOL_A_STATS_GRP. Its statistics are read once its id says eth-phy, wherever the id
// comes: the kernel puts it first, but nothing requires a reader to depend on that.
bool decode_group(std::span<const uint8_t> bytes, bool& eth_phy,
                  std::optional<uint64_t>& symbol_errors, std::string& problem) {
  std::optional<uint32_t> id;
  Seen seen;
  if (!for_each_attr(bytes, problem, [&](const Attr& a) {
        if (a.type != kStatsGrpId || !seen.first(a.type)) return true;
        uint32_t v = 0;
        if (!netlink_wire::number_attr(a, v, "stats group id", problem)) return false;
        id = v;
        return true;
      })) {
    return false;
  }
  if (id != kStatsEthPhy) return true;  // another group (eth-mac, rmon ...) or none
  eth_phy = true;
  return for_each_attr(bytes, problem, [&](const Attr& a) {
    if (a.type != kStatsGrpStat) return true;  // id, string set id, pad
    return decode_stat(a.payload, symbol_errors, problem);
  });
}

void decode_stats(std::span<const uint8_t> attrs, Message& m) {
  PhyStats s;
  bool header = false;
  bool has_index = false;
  bool eth_phy = false;
  Seen seen;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (a.type == kStatsGrp) {
      // One per group asked for, so it may come more than once; the first eth-phy one counts.
      if (eth_phy) return true;
      return decode_group(a.payload, eth_phy, s.symbol_errors, m.problem);
    }
    if (a.type == kStatsHeader && seen.first(a.type)) {
      header = true;
      return decode_header(a.payload, m, has_index);
    }
    return true;  // the stats source of newer kernels
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  const char* missing = !header ? "header" : !has_index ? "ifindex" : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  m.kind = MessageKind::kPhyStats;
  m.stats = std::move(s);
}

void decode_family(std::span<const uint8_t> attrs, Message& m) {
  Family f;
  std::string name;
  bool has_id = false;
  Seen seen;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    switch (a.type) {
      case CTRL_ATTR_FAMILY_ID:
        has_id = true;
        return netlink_wire::number_attr(a, f.id, "family id", m.problem);
      case CTRL_ATTR_FAMILY_NAME:
        return netlink_wire::string_attr(a, name, "family name", kMaxGroupName, m.problem);
      case CTRL_ATTR_MCAST_GROUPS:
        // An array: each entry a nest of a name and an id.
        return for_each_attr(a.payload, m.problem, [&](const Attr& group) {
          std::string group_name;
          uint32_t id = 0;
          if (!for_each_attr(group.payload, m.problem, [&](const Attr& g) {
                if (g.type == CTRL_ATTR_MCAST_GRP_NAME)
                  return netlink_wire::string_attr(g, group_name, "group name", kMaxGroupName,
                                                   m.problem);
                if (g.type == CTRL_ATTR_MCAST_GRP_ID)
                  return netlink_wire::number_attr(g, id, "group id", m.problem);
                return true;
              })) {
            return false;
          }
          if (group_name == kMonitorGroupName && f.monitor_group == 0) f.monitor_group = id;
          return true;
        });
      default:
        return true;
    }
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  if (!has_id || name != kFamilyName) {
    m.kind = MessageKind::kMalformed;
    m.problem = has_id ? "the family is \"" + name + "\", not ethtool" : "no family id";
    return;
  }
  m.kind = MessageKind::kFamily;
  m.family = f;
}

void decode_one(std::span<const uint8_t> payload, uint16_t ethtool_family, Message& m) {
  const bool controller = m.type == GENL_ID_CTRL;
  const bool ethtool = ethtool_family != 0 && m.type == ethtool_family;
  if (!controller && !ethtool) return;  // another family's: not ours to read
  if (payload.size() < kGenlHeader) {
    m.kind = MessageKind::kMalformed;
    m.problem = "no generic netlink header";
    return;
  }
  m.command = payload[0];
  const auto attrs = payload.subspan(kGenlHeader);
  if (controller) {
    if (m.command == CTRL_CMD_NEWFAMILY) decode_family(attrs, m);
    return;
  }
  if (m.command == kMsgFecGetReply) decode_fec(attrs, m);
  if (m.command == kMsgStatsGetReply) decode_stats(attrs, m);
}

std::vector<uint8_t> request(uint16_t type, uint32_t seq, uint32_t port_id, uint8_t command,
                             uint8_t version) {
  std::vector<uint8_t> out = netlink_wire::message_header(type, NLM_F_REQUEST, seq);
  std::memcpy(out.data() + offsetof(nlmsghdr, nlmsg_pid), &port_id, sizeof port_id);
  out.push_back(command);
  out.push_back(version);
  out.resize(out.size() + 2, 0);  // genlmsghdr.reserved
  return out;
}

template <typename T>
void put_num(std::vector<uint8_t>& out, uint16_t type, T v) {
  netlink_wire::put_attr(out, type, &v, sizeof v);
}

// A nest of `inner`'s attributes. The kernel's strict validation of ethtool requests refuses a
// nest without NLA_F_NESTED (EINVAL, "NLA_F_NESTED is missing").
void put_nest(std::vector<uint8_t>& out, uint16_t type, const std::vector<uint8_t>& inner) {
  netlink_wire::put_attr(out, type | NLA_F_NESTED, inner.data(), inner.size());
}

}  // namespace

void decode(std::span<const uint8_t> datagram, uint16_t ethtool_family, std::vector<Message>& out) {
  netlink_wire::decode_messages(datagram, out, [&](std::span<const uint8_t> payload, Message& m) {
    decode_one(payload, ethtool_family, m);
  });
}

std::string fec_mode_name(uint32_t link_mode_bit) {
  switch (link_mode_bit) {
    case kLinkModeFecNone:
      return "off";
    case kLinkModeFecRs:
      return "rs";
    case kLinkModeFecBaser:
      return "baser";
    case kLinkModeFecLlrs:
      return "llrs";
    default:
      return "";
  }
}

std::vector<uint8_t> family_request(uint32_t seq, uint32_t port_id) {
  std::vector<uint8_t> out = request(GENL_ID_CTRL, seq, port_id, CTRL_CMD_GETFAMILY, 1);
  const std::string name(kFamilyName);
  netlink_wire::put_attr(out, CTRL_ATTR_FAMILY_NAME, name.c_str(), name.size() + 1);
  netlink_wire::finish(out);
  return out;
}

// The request header's netdev: by ifindex, or by name (NUL-terminated, as the kernel's policy
// wants it).
void put_netdev(std::vector<uint8_t>& header, const Netdev& netdev) {
  if (const auto* ifindex = std::get_if<uint32_t>(&netdev)) {
    put_num(header, kHeaderDevIndex, *ifindex);
  } else {
    const std::string& name = std::get<std::string>(netdev);
    netlink_wire::put_attr(header, kHeaderDevName, name.c_str(), name.size() + 1);
  }
}

std::vector<uint8_t> fec_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                 uint32_t port_id) {
  std::vector<uint8_t> out = request(ethtool_family, seq, port_id, kMsgFecGet, kFamilyVersion);
  std::vector<uint8_t> header;
  put_netdev(header, netdev);
  put_num(header, kHeaderFlags, kFlagStats);
  put_nest(out, kFecHeader, header);
  netlink_wire::finish(out);
  return out;
}

std::vector<uint8_t> phy_stats_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                       uint32_t port_id) {
  std::vector<uint8_t> out = request(ethtool_family, seq, port_id, kMsgStatsGet, kFamilyVersion);
  std::vector<uint8_t> header;
  put_netdev(header, netdev);
  put_nest(out, kStatsHeader, header);
  // A compact list: "these groups and no others". The size is the kernel's group count, and the
  // value one u32 word, as ethnl_compact_sanity_checks wants (its length must match the size).
  std::vector<uint8_t> groups;
  netlink_wire::put_attr(groups, kBitsetNomask, nullptr, 0);
  put_num(groups, kBitsetSize, kStatsGroupCount);
  put_num(groups, kBitsetValue, uint32_t{1} << kStatsEthPhy);
  put_nest(out, kStatsGroups, groups);
  netlink_wire::finish(out);
  return out;
}

}  // namespace rdma_eventd::daemon::ethtool
