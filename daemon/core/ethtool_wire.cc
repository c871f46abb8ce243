#include "core/ethtool_wire.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <variant>

#include "core/netlink_wire.h"

namespace rdma_eventd::daemon::ethtool {
namespace {

using netlink_wire::Attr;
using netlink_wire::for_each_attr;
using netlink_wire::load;
using netlink_wire::Seen;
constexpr size_t kMaxGroupName = GENL_NAMSIZ - 1;  // family and group names: the kernel's limit
// Of the controller's answer, as of every ethtool reply, the first of a repeated attribute counts.
constexpr netlink_wire::FamilyQuery kFamilyQuery{kFamilyName, kMonitorGroupName, kMaxGroupName,
                                                 netlink_wire::Repeated::kFirstCounts};

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

// Where each FEC statistic is kept, and its name in a problem.
struct FecStatField {
  uint16_t type;
  std::optional<uint64_t> PhyStats::*field;
  const char* what;
};
constexpr FecStatField kFecStatFields[] = {
    {kFecStatCorrected, &PhyStats::fec_corrected_blocks, "corrected blocks"},
    {kFecStatUncorrectable, &PhyStats::fec_uncorrectable_blocks, "uncorrectable blocks"},
    {kFecStatCorrectedBits, &PhyStats::fec_corrected_bits, "corrected bits"},
};

bool decode_fec_stats(std::span<const uint8_t> bytes, PhyStats& s, std::string& problem) {
  Seen seen;
  return for_each_attr(bytes, problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    for (const FecStatField& f : kFecStatFields)
      if (a.type == f.type) return fec_stat(a, s.*f.field, f.what, problem);
    return true;  // the pad, and the histogram of newer kernels
  });
}

// What a reply's header nest gave: whether it came, and whether with the netdev's ifindex.
struct HeaderFound {
  bool header = false;
  bool ifindex = false;
};

// The reply header: the netdev's ifindex (required) and name.
bool decode_header(std::span<const uint8_t> bytes, Message& m, HeaderFound& found) {
  found.header = true;
  Seen seen;
  return for_each_attr(bytes, m.problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    if (a.type == kHeaderDevIndex) {
      found.ifindex = true;
      return netlink_wire::number_attr(a, m.ifindex, "ifindex", m.problem);
    }
    if (a.type == kHeaderDevName)
      return netlink_wire::string_attr(a, m.ifname, "netdev name", kMaxDevName, m.problem);
    return true;
  });
}

// A reply whose attributes were all walked (`framed`) and whose header named its netdev is
// `kind`, with `stats`; any other is kMalformed.
void complete_reply(bool framed, const HeaderFound& found, MessageKind kind, PhyStats&& stats,
                    Message& m) {
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  const char* missing = !found.header ? "header" : !found.ifindex ? "ifindex" : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  m.kind = kind;
  m.stats = std::move(stats);
}

void decode_fec(std::span<const uint8_t> attrs, Message& m) {
  PhyStats s;
  HeaderFound found;
  Seen seen;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (!seen.first(a.type)) return true;
    switch (a.type) {
      case kFecHeader:
        return decode_header(a.payload, m, found);
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
  complete_reply(framed, found, MessageKind::kFec, std::move(s), m);
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
  HeaderFound found;
  bool eth_phy = false;
  Seen seen;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    if (a.type == kStatsGrp) {
      // One per group asked for, so it may come more than once; the first eth-phy one counts.
      if (eth_phy) return true;
      return decode_group(a.payload, eth_phy, s.symbol_errors, m.problem);
    }
    if (a.type == kStatsHeader && seen.first(a.type)) return decode_header(a.payload, m, found);
    return true;  // the stats source of newer kernels
  });
  complete_reply(framed, found, MessageKind::kPhyStats, std::move(s), m);
}

void decode_family(std::span<const uint8_t> attrs, Message& m) {
  if (const auto f = netlink_wire::family_message(attrs, kFamilyQuery, m))
    m.family = Family{.id = f->id, .monitor_group = f->group};
}

void decode_command(std::span<const uint8_t> attrs, Message& m) {
  if (m.command == kMsgFecGetReply) decode_fec(attrs, m);
  if (m.command == kMsgStatsGetReply) decode_stats(attrs, m);
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

// An ethtool request about `netdev`: NLM_F_REQUEST without NLM_F_ACK (its reply or an error
// answers it), and the request header nest, of type `header_type`, with ETHTOOL_A_HEADER_FLAGS
// when `flags` has any. The caller adds the rest and finishes it.
std::vector<uint8_t> request(uint16_t ethtool_family, uint8_t command, uint16_t header_type,
                             const Netdev& netdev, uint32_t flags, uint32_t seq, uint32_t port_id) {
  std::vector<uint8_t> out = netlink_wire::genl_request(ethtool_family, NLM_F_REQUEST, seq, port_id,
                                                        command, kFamilyVersion);
  std::vector<uint8_t> header;
  put_netdev(header, netdev);
  if (flags != 0) put_num(header, kHeaderFlags, flags);
  put_nest(out, header_type, header);
  return out;
}

}  // namespace

void decode(std::span<const uint8_t> datagram, uint16_t ethtool_family, std::vector<Message>& out) {
  netlink_wire::decode_messages(datagram, out, [&](std::span<const uint8_t> payload, Message& m) {
    netlink_wire::decode_genl(payload, ethtool_family, m, decode_family, decode_command);
  });
}

std::string fec_mode_name(uint32_t link_mode_bit) {
  for (const FecEncoding& e : kFecEncodings)
    if (e.link_mode_bit == link_mode_bit) return std::string(e.name);
  return "";
}

std::vector<uint8_t> family_request(uint32_t seq, uint32_t port_id) {
  return netlink_wire::family_request(kFamilyName, seq, port_id);
}

std::vector<uint8_t> fec_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                 uint32_t port_id) {
  std::vector<uint8_t> out =
      request(ethtool_family, kMsgFecGet, kFecHeader, netdev, kFlagStats, seq, port_id);
  netlink_wire::finish(out);
  return out;
}

std::vector<uint8_t> phy_stats_request(uint16_t ethtool_family, const Netdev& netdev, uint32_t seq,
                                       uint32_t port_id) {
  std::vector<uint8_t> out =
      request(ethtool_family, kMsgStatsGet, kStatsHeader, netdev, 0, seq, port_id);
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
