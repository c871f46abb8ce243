#include "ethtool_wire.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <cstring>

#include "netlink_wire.h"
#include "rdma_eventd/internal/ethtool_uapi.h"

namespace rdmasim::ethtool_wire {
namespace {

using namespace netlink_wire;
using namespace rdma_eventd::internal::ethtool_uapi;

constexpr uint32_t kBitsetMaxSize = 32767;  // ETHNL_MAX_BITSET_SIZE (net/ethtool/bitset.h)
// stats_std_names (net/ethtool/stats.c), by ETHTOOL_STATS_* bit.
constexpr const char* kGroupNames[kStatsGroupCount] = {"eth-phy", "eth-mac", "eth-ctrl", "rmon"};
// ETH_SS_STATS_ETH_PHY ... ETH_SS_STATS_RMON, by the same bit.
constexpr uint32_t kGroupStringSets[kStatsGroupCount] = {17, 18, 19, 20};

struct Attr {
  uint16_t type;
  bool nested;  // NLA_F_NESTED
  std::span<const uint8_t> payload;
};

// nla_parse with NL_VALIDATE_STRICT: an attribute whose length does not fit, or bytes after the
// last one, are EINVAL. visit(const Attr&) returns 0 or an errno, which ends the walk. Of a
// repeated attribute the kernel keeps the last (tb[type] is overwritten), so visits assign.
template <typename Visit>
int walk(std::span<const uint8_t> bytes, Visit visit) {
  size_t at = 0;
  while (at + sizeof(nlattr) <= bytes.size()) {
    uint16_t len, type;
    std::memcpy(&len, bytes.data() + at, 2);
    std::memcpy(&type, bytes.data() + at + 2, 2);
    if (len < sizeof(nlattr) || len > bytes.size() - at) return EINVAL;
    const Attr a{static_cast<uint16_t>(type & NLA_TYPE_MASK), (type & NLA_F_NESTED) != 0,
                 bytes.subspan(at + sizeof(nlattr), len - sizeof(nlattr))};
    if (const int e = visit(a)) return e;
    at += align4(len);
  }
  return at < bytes.size() ? EINVAL : 0;
}

// validate_nla: a nest must say so and nothing else may (NL_VALIDATE_NESTED); NLA_U32 is exactly
// 4 bytes and NLA_FLAG none (NL_VALIDATE_STRICT_ATTRS).
int nest(const Attr& a) {
  return a.nested ? 0 : EINVAL;
}
int u32(const Attr& a, uint32_t* v) {
  if (a.nested || a.payload.size() != 4) return EINVAL;
  std::memcpy(v, a.payload.data(), 4);
  return 0;
}
int flag(const Attr& a) {
  return a.nested || !a.payload.empty() ? EINVAL : 0;
}
// NLA_NUL_STRING of at most `max` characters: a NUL within the first max + 1 bytes.
int nul_string(const Attr& a, size_t max, std::string* s) {
  const size_t scan = std::min(a.payload.size(), max + 1);
  const auto* p = reinterpret_cast<const char*>(a.payload.data());
  const size_t n = strnlen(p, scan);
  if (a.nested || n == scan) return EINVAL;
  s->assign(p, n);
  return 0;
}

std::span<const uint8_t> attributes(std::span<const uint8_t> message) {
  return message.subspan(sizeof(nlmsghdr) + GENL_HDRLEN);
}

// ethnl_parse_bit: one ETHTOOL_A_BITSET_BITS_BIT of a verbose bitset.
int parse_bit(const Attr& bit, bool no_mask, uint32_t* index, bool* value) {
  if (const int e = nest(bit)) return e;
  std::optional<uint32_t> idx;
  std::optional<std::string> name;
  bool set = false;
  if (const int e = walk(bit.payload, [&](const Attr& a) {
        switch (a.type) {
          case kBitsetBitIndex:
            idx.emplace();
            return u32(a, &*idx);
          case kBitsetBitName:
            name.emplace();
            return nul_string(a, SIZE_MAX - 1, &*name);
          case kBitsetBitValue:
            set = true;
            return flag(a);
          default:
            return EINVAL;
        }
      }))
    return e;
  if (idx) {
    if (*idx >= kStatsGroupCount) return EOPNOTSUPP;  // "bit index too high"
    if (name && *name != kGroupNames[*idx]) return EINVAL;
    *index = *idx;
  } else if (name) {
    size_t i = 0;
    while (i < kStatsGroupCount && *name != kGroupNames[i])
      ++i;
    if (i == kStatsGroupCount) return EOPNOTSUPP;  // "bit name not found"
    *index = static_cast<uint32_t>(i);
  } else {
    return EINVAL;
  }
  *value = no_mask || set;
  return 0;
}

// ethnl_update_bitset32 on an empty bitmap of the four groups.
int parse_bitset(const Attr& groups, uint32_t* bitmap) {
  if (const int e = nest(groups)) return e;
  bool no_mask = false;
  std::optional<uint32_t> size;
  std::optional<Attr> bits, value, mask;
  if (const int e = walk(groups.payload, [&](const Attr& a) {
        switch (a.type) {
          case kBitsetNomask:
            no_mask = true;
            return flag(a);
          case kBitsetSize:
            size.emplace();
            if (const int bad = u32(a, &*size)) return bad;
            return *size > kBitsetMaxSize ? ERANGE : 0;
          case kBitsetBits:
            bits = a;
            return nest(a);
          case kBitsetValue:
            value = a;
            return a.nested ? EINVAL : 0;
          case kBitsetMask:
            mask = a;
            return a.nested ? EINVAL : 0;
          default:
            return EINVAL;
        }
      }))
    return e;
  *bitmap = 0;
  if (bits) {  // ethnl_update_bitset32_verbose
    if (value || mask) return EINVAL;
    return walk(bits->payload, [&](const Attr& bit) {
      if (bit.type != kBitsetBitsBit) return EINVAL;
      uint32_t index = 0;
      bool set = false;
      if (const int e = parse_bit(bit, no_mask, &index, &set)) return e;
      *bitmap = set ? *bitmap | (1u << index) : *bitmap & ~(1u << index);
      return 0;
    });
  }
  // ethnl_compact_sanity_checks
  if ((no_mask && mask) || !size || !value || (!no_mask && !mask)) return EINVAL;
  const size_t bytes = (*size + 31) / 32 * 4;
  if (value->payload.size() != bytes || (mask && mask->payload.size() != bytes)) return EINVAL;
  const std::span<const uint8_t> test = no_mask ? value->payload : mask->payload;
  auto bit_of = [](std::span<const uint8_t> words, uint32_t i) {
    uint32_t w;
    std::memcpy(&w, words.data() + i / 32 * 4, 4);
    return (w >> (i % 32)) & 1;
  };
  for (uint32_t i = kStatsGroupCount; i < *size; ++i)
    if (bit_of(test, i)) return EINVAL;  // "cannot modify bits past kernel bitset size"
  for (uint32_t i = 0; i < std::min(*size, kStatsGroupCount); ++i)
    if ((no_mask || bit_of(mask->payload, i)) && bit_of(value->payload, i)) *bitmap |= 1u << i;
  return 0;
}

void put_genl(std::vector<uint8_t>& out, uint8_t cmd, uint8_t version) {
  out.insert(out.end(), {cmd, version, 0, 0});
}

// ethnl_fill_reply_header. Nests the ethtool code starts carry NLA_F_NESTED (nla_nest_start).
void put_header(std::vector<uint8_t>& out, uint16_t type, const Netdev& n) {
  const size_t at = begin_nest(out, type | NLA_F_NESTED);
  put_num<uint32_t>(out, kHeaderDevIndex, n.ifindex);
  put_string(out, kHeaderDevName, n.name);
  end_nest(out, at);
}

// A reply's netlink and genetlink headers and its reply header nest; end_message(out, the
// offset returned) completes it.
size_t begin_reply(std::vector<uint8_t>& out, uint8_t command, uint16_t header_type,
                   const Netdev& n, uint32_t pid, uint32_t seq, uint16_t flags) {
  const size_t at = begin_message(out, kFamilyId, flags, seq, pid);
  put_genl(out, command, kFamilyVersion);
  put_header(out, header_type, n);
  return at;
}

// The link-mode bit of a netdev's FEC mode (only a netdev with PHY statistics is answered, so
// never kUnsupported).
uint32_t active_bit(FecMode mode) {
  for (const FecEncoding& e : kFecEncodings)
    if (e.name == fec_mode_name(mode)) return e.link_mode_bit;
  return kLinkModeFecLlrs;
}

std::string link_mode_name(uint32_t bit) {  // link_mode_names in net/ethtool/common.c
  for (const FecEncoding& e : kFecEncodings)
    if (e.link_mode_bit == bit) return std::string(e.link_mode_name);
  return "LLRS";
}

// ethnl_put_bitset32 without a mask: a list of the set bits, verbose (index and name of each)
// or compact (u32 words).
void put_modes(std::vector<uint8_t>& out, uint32_t bit, bool compact) {
  const size_t at = begin_nest(out, kFecModes | NLA_F_NESTED);
  put_attr(out, kBitsetNomask, nullptr, 0);
  put_num<uint32_t>(out, kBitsetSize, kLinkModeBits61);
  if (compact) {
    std::vector<uint32_t> words((kLinkModeBits61 + 31) / 32, 0);
    words[bit / 32] |= 1u << (bit % 32);
    put_attr(out, kBitsetValue, words.data(), words.size() * 4);
  } else {
    const size_t bits = begin_nest(out, kBitsetBits | NLA_F_NESTED);
    const size_t one = begin_nest(out, kBitsetBitsBit | NLA_F_NESTED);
    put_num<uint32_t>(out, kBitsetBitIndex, bit);
    put_string(out, kBitsetBitName, link_mode_name(bit));
    end_nest(out, one);
    end_nest(out, bits);
  }
  end_nest(out, at);
}

// One statistic as fec_stats_recalc leaves it: what mlx5e_stats_fec_get fills. Nothing with FEC
// off; RS and LLRS the total; BASE-R each lane, spread evenly (the kernel puts their sum first).
std::vector<uint64_t> fec_stat(const Netdev& n, uint64_t total, bool per_lane) {
  if (n.phy.fec == FecMode::kOff) return {};
  if (!per_lane || n.phy.fec != FecMode::kBaser) return {total};
  std::vector<uint64_t> v{total};
  for (unsigned i = 0; i < n.lanes; ++i)
    v.push_back(total / n.lanes + (i < total % n.lanes));
  return v;
}

void put_array(std::vector<uint8_t>& out, uint16_t type, const std::vector<uint64_t>& v) {
  put_attr(out, type, v.data(), v.size() * sizeof(uint64_t));
}

}  // namespace

int parse_request(std::span<const uint8_t> message, Request* r) {
  r->command = message[sizeof(nlmsghdr)];
  const bool fec = r->command == kMsgFecGet;
  const uint16_t header_type = fec ? kFecHeader : kStatsHeader;
  const uint32_t flag_mask = fec ? kFlagCompactBitsets | kFlagOmitReply | kFlagStats
                                 : kFlagCompactBitsets | kFlagOmitReply;
  std::optional<Attr> header;
  if (const int e = walk(attributes(message), [&](const Attr& a) {
        if (a.type == header_type) {
          header = a;
          return nest(a);
        }
        if (!fec && a.type == kStatsGroups) return nest(a);
        return EINVAL;  // maxattr, or a type the policy leaves NLA_UNSPEC
      }))
    return e;
  if (!header) return EINVAL;  // "request header missing"
  if (const int e = walk(header->payload, [&](const Attr& a) {
        switch (a.type) {
          case kHeaderDevIndex:
            r->ifindex.emplace();
            return u32(a, &*r->ifindex);
          case kHeaderDevName:
            r->name.emplace();
            return nul_string(a, kMaxDevName, &*r->name);
          case kHeaderFlags:
            if (const int bad = u32(a, &r->flags)) return bad;
            return r->flags & ~flag_mask ? EINVAL : 0;
          default:
            return EINVAL;
        }
      }))
    return e;
  // A dump names no device; a request for one must (the dump's caller does not ask).
  return r->ifindex || r->name ? 0 : EINVAL;
}

int parse_groups(std::span<const uint8_t> message, Request* r) {
  std::optional<Attr> groups;
  walk(attributes(message), [&](const Attr& a) {
    if (a.type == kStatsGroups) groups = a;
    return 0;
  });
  if (groups)
    if (const int e = parse_bitset(*groups, &r->groups)) return e;
  return r->groups ? 0 : EINVAL;  // "no stats requested"
}

void put_family(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq, uint16_t flags) {
  const size_t at = begin_message(out, GENL_ID_CTRL, flags, seq, pid);
  put_genl(out, CTRL_CMD_NEWFAMILY, 2);  // the controller's family version
  put_string(out, CTRL_ATTR_FAMILY_NAME, std::string(kFamilyName));
  put_num<uint16_t>(out, CTRL_ATTR_FAMILY_ID, kFamilyId);
  put_num<uint32_t>(out, CTRL_ATTR_VERSION, kFamilyVersion);
  put_num<uint32_t>(out, CTRL_ATTR_HDRSIZE, 0);
  put_num<uint32_t>(out, CTRL_ATTR_MAXATTR, 0);  // ethtool's policies are per command
  // CTRL_ATTR_OPS is left out, as the devlink family's answer leaves it (docs/simulator.md).
  const size_t groups = begin_nest(out, CTRL_ATTR_MCAST_GROUPS);
  const size_t group = begin_nest(out, 1);
  put_num<uint32_t>(out, CTRL_ATTR_MCAST_GRP_ID, kMonitorGroup);
  put_string(out, CTRL_ATTR_MCAST_GRP_NAME, std::string(kMonitorGroupName));
  end_nest(out, group);
  end_nest(out, groups);
  end_message(out, at);
}

void put_fec_reply(std::vector<uint8_t>& out, const Netdev& n, const Request& r, uint32_t pid,
                   uint32_t seq, uint16_t flags) {
  const size_t at = begin_reply(out, kMsgFecGetReply, kFecHeader, n, pid, seq, flags);
  // The configured encodings are the active one, as after `ethtool --set-fec DEV encoding X`.
  const uint32_t bit = active_bit(n.phy.fec);
  put_modes(out, bit, r.flags & kFlagCompactBitsets);
  put_num<uint8_t>(out, kFecAuto, 0);
  put_num<uint32_t>(out, kFecActive, bit);
  if (r.flags & kFlagStats) {
    const size_t stats = begin_nest(out, kFecStats | NLA_F_NESTED);
    put_array(out, kFecStatCorrected, fec_stat(n, n.phy.fec_corrected_blocks, true));
    put_array(out, kFecStatUncorrectable, fec_stat(n, n.phy.fec_uncorrectable_blocks, true));
    // fec_set_corrected_bits_total: the PHY's total, whatever the mode.
    put_array(out, kFecStatCorrectedBits, fec_stat(n, n.phy.fec_corrected_bits, false));
    end_nest(out, stats);
  }
  end_message(out, at);
}

void put_stats_reply(std::vector<uint8_t>& out, const Netdev& n, const Request& r, uint32_t pid,
                     uint32_t seq, uint16_t flags) {
  const size_t at = begin_reply(out, kMsgStatsGetReply, kStatsHeader, n, pid, seq, flags);
  for (uint32_t g = 0; g < kStatsGroupCount; ++g) {
    if (!(r.groups & (1u << g))) continue;
    const size_t grp = begin_nest(out, kStatsGrp | NLA_F_NESTED);
    put_num<uint32_t>(out, kStatsGrpId, g);
    put_num<uint32_t>(out, kStatsGrpSsId, kGroupStringSets[g]);
    if (g == kStatsEthPhy && n.phy.supported()) {
      const size_t stat = begin_nest(out, kStatsGrpStat | NLA_F_NESTED);
      put_num<uint64_t>(out, kStatEthPhySymbolErrors, n.phy.symbol_errors);
      end_nest(out, stat);
    }
    end_nest(out, grp);
  }
  end_message(out, at);
}

}  // namespace rdmasim::ethtool_wire
