// The ethtool family of the generic netlink stand-in (DIR/devlink.sock, devlink_standin.h;
// docs/simulator.md, "RoCE PHY statistics"): ETHTOOL_MSG_FEC_GET and ETHTOOL_MSG_STATS_GET for
// the netdevs of the fabric's RoCE ports, as ethnl_default_doit and ethnl_default_dumpit of
// Linux 6.1 (net/ethtool/netlink.c) answer them. Other ethtool commands: EOPNOTSUPP.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ethtool_wire.h"
#include "fabric.h"

namespace rdmasim {

class EthtoolFamily {
 public:
  explicit EthtoolFamily(const Fabric& fabric) : fabric_(fabric) {}

  // A request to the family (the whole message, at least its genetlink header long) from port
  // id `pid`: the datagrams to send back go to `replies`. Returns 0, or the errno the request
  // fails with (then `replies` is empty).
  int handle(std::span<const uint8_t> message, uint32_t pid,
             std::vector<std::vector<uint8_t>>* replies);

  struct Stats {
    uint64_t fec = 0;    // FEC_GET replies sent
    uint64_t stats = 0;  // STATS_GET replies sent
  };
  const Stats& stats() const { return stats_; }

 private:
  // Every netdev of a present device's RoCE port, in device and port order.
  std::vector<ethtool_wire::Netdev> netdevs() const;

  const Fabric& fabric_;
  Stats stats_;
};

}  // namespace rdmasim
