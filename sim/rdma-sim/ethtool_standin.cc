#include "ethtool_standin.h"

#include <linux/netlink.h>

#include <cerrno>

#include "netlink_wire.h"
#include "rdma_eventd/internal/ethtool_uapi.h"

namespace rdmasim {

using namespace rdma_eventd::internal::ethtool_uapi;

std::vector<ethtool_wire::Netdev> EthtoolFamily::netdevs() const {
  std::vector<ethtool_wire::Netdev> out;
  for (const DeviceEntry& e : fabric_.devices())
    for (const Port& p : e.model.ports)
      if (p.is_ethernet() && !p.netdev.empty())
        out.push_back({p.netdev_ifindex, p.netdev, p.phy, fec_lanes(p.attr.active_width)});
  return out;
}

int EthtoolFamily::handle(std::span<const uint8_t> message, uint32_t pid,
                          std::vector<std::vector<uint8_t>>* replies) {
  netlink_wire::Header h;
  netlink_wire::read_header(message, 0, &h);
  ethtool_wire::Request r;
  r.command = message[sizeof(nlmsghdr)];
  if (r.command != kMsgFecGet && r.command != kMsgStatsGet) return EOPNOTSUPP;  // not modelled
  const bool fec = r.command == kMsgFecGet;
  if (const int e = ethtool_wire::parse_request(message, &r)) return e;
  const bool dump = (h.flags & NLM_F_DUMP) == NLM_F_DUMP;
  if (!dump && !r.ifindex && !r.name) return EINVAL;  // "neither ifindex nor name specified"

  // ethnl_parse_header_dev_get: by ifindex (a name given too must match), else by name.
  const std::vector<ethtool_wire::Netdev> all = netdevs();
  const ethtool_wire::Netdev* dev = nullptr;
  if (r.ifindex || r.name) {
    for (const ethtool_wire::Netdev& n : all)
      if (r.ifindex ? n.ifindex == *r.ifindex : n.name == *r.name) {
        dev = &n;
        break;
      }
    if (!dev || (r.ifindex && r.name && dev->name != *r.name)) return ENODEV;
  }
  if (!fec)
    if (const int e = ethtool_wire::parse_groups(message, &r)) return e;

  std::vector<uint8_t> out;
  auto put = [&](const ethtool_wire::Netdev& n, uint16_t flags) {
    if (fec) {
      ethtool_wire::put_fec_reply(out, n, r, pid, h.seq, flags);
      ++stats_.fec;
    } else {
      ethtool_wire::put_stats_reply(out, n, r, pid, h.seq, flags);
      ++stats_.stats;
    }
  };
  if (!dump) {
    // fec_prepare_data: a driver without get_fecparam fails the request.
    if (fec && !dev->phy.supported()) return EOPNOTSUPP;
    put(*dev, 0);
    replies->push_back(std::move(out));
    return 0;
  }
  // ethnl_default_dumpit: every netdev (a device named in the header is ignored), those whose
  // driver answers EOPNOTSUPP skipped; then NLMSG_DONE on its own.
  for (const ethtool_wire::Netdev& n : all)
    if (!fec || n.phy.supported()) put(n, NLM_F_MULTI);
  if (!out.empty()) replies->push_back(std::move(out));
  std::vector<uint8_t> done;
  netlink_wire::put_done(done, pid, h.seq);
  replies->push_back(std::move(done));
  return 0;
}

}  // namespace rdmasim
