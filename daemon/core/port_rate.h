// The port's lane speed where ibv_port_attr cannot carry it. Pure functions, no I/O.
//
// The kernel's speeds (ib_port_speed, include/rdma/ib_verbs.h) go up to XDR (0x100), which does
// not fit the 8-bit active_speed of ibv_port_attr: uverbs' copy_port_attr_to_resp truncates it
// to 0 there and carries it only in the extended query's active_speed_ex, which rdma-core 44
// (Debian 12) does not read. sysfs `ports/N/rate` (rate_show, drivers/infiniband/core/sysfs.c)
// prints every speed the kernel knows in any release: "800 Gb/sec (4X XDR)".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "rdma_eventd/record.h"
#include "rdma_eventd/types.h"

namespace rdma_eventd::daemon {

// One `rate` file as rate_show printed it: "%d%s Gb/sec (%dX%s)\n", the rate in Gb/s (".5"
// when it has a half), the lane count, and " <SPEED>" (empty for SDR in kernels before 5.x
// named it).
struct SysfsRate {
  uint32_t deci_gbps = 0;                 // 8000 for "800 Gb/sec"
  uint32_t lanes = 0;                     // 1, 2, 4, 8 or 12
  LinkSpeed speed = LinkSpeed::kUnknown;  // unknown: no name, or a name this version lacks
  friend bool operator==(const SysfsRate&, const SysfsRate&) = default;
};

// Exactly that text, with or without its newline: nothing before or after, no sign, no other
// space. A known speed's rate must be its lanes x its lane rate (a text that disagrees with
// itself says nothing reliable). nullopt for anything else.
std::optional<SysfsRate> parse_sysfs_rate(std::string_view text);

// The port's lane speed: active_speed (ibv_port_attr's, 8 bits) when it is a code this version
// knows, else the `rate` file's speed when it is one that the 8-bit field cannot carry (XDR).
// Any other speed in `rate` beside an unknown active_speed is rate_show's fallback ("default to
// SDR for invalid rates"), not a speed: unknown.
LinkSpeed choose_lane_speed(uint32_t active_speed, const std::optional<SysfsRate>& rate);

// True when the 8-bit active_speed cannot carry the speed (its ib_port_speed code is above 0xff).
bool beyond_active_speed(LinkSpeed speed);

// A port's effective speed after DEVICE_SPEED_CHANGE. The kernel sends that event because
// ibv_query_port does not carry the effective speed of a port in link aggregation or multi-port
// E-Switch; rdma-core 62 added ibv_query_port_speed(context, port, &speed) for it, in 100 Mb/s.
// `query` is that call on the device (0 or an errno, as the library returns it); empty when the
// installed libibverbs has none (the verbs layer looks it up at run time).
using PortSpeedQuery = std::function<int(uint32_t port, uint64_t* speed_100mbps)>;
EffectiveSpeed effective_speed_of(uint32_t port, const PortSpeedQuery& query);

}  // namespace rdma_eventd::daemon
