// Test only: ibv_query_port_speed(), which rdma-core 62 adds and the simulator's stand-in
// libibverbs (rdma-core 44's) lacks, preloaded into the daemon so that its run-time lookup
// (dlsym in daemon/verbs) finds one and calls it. The answer is the port's rate as
// ibv_query_port gives it, in the call's 100 Mb/s units, and ENODATA for a port whose rate
// that leaves unknown: it checks the daemon's path through a real process, not what mlx5
// answers for a bond (which the simulator does not model).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cmath>
#include <cstdint>

#include "schema/raw_values.h"

extern "C" __attribute__((visibility("default"))) int ibv_query_port_speed(ibv_context* context,
                                                                           uint32_t port_num,
                                                                           uint64_t* port_speed) {
  ibv_port_attr attr{};
  if (int err = ibv_query_port(context, static_cast<uint8_t>(port_num), &attr); err != 0)
    return err;
  const double gbps = rdma_eventd::lanes_from_raw_width(attr.active_width) *
                      rdma_eventd::lane_gbps(rdma_eventd::link_speed_from_raw(attr.active_speed));
  if (gbps <= 0) return ENODATA;
  *port_speed = static_cast<uint64_t>(std::llround(gbps * 10));
  return 0;
}
