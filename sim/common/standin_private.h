// The private interface between the stand-in libibverbs.so.1 and the stand-in libmlx5.so.1: how
// libmlx5 finds the simulated device behind an ibv_device or ibv_context, opens a context with or
// without DEVX, and sends its DEVX commands over the context's connection to the simulator.
// libibverbs exports these in version node RDMA_SIM_PRIVATE_1, which the real library does not
// have: the stand-in libmlx5 refuses to load with any other libibverbs.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "common/shm_layout.h"

struct RdmaSimDevice {
  rdmasim::ShmFabric* shm;  // the fabric's shared state, mapped while the device lives
  bool writable;            // false: the state file is read-only here, counters are not kept
  uint32_t slot;            // the device's record
  int32_t index;            // its index (a record whose index differs is another device)
  uint32_t provider;        // rdmasim::devx::Provider, as listed when the device appeared
};

extern "C" {

// 0 and *out, or ENODEV when `device` is not a device of the stand-in.
int rdma_sim_device(ibv_device* device, RdmaSimDevice* out);
// A consistent copy of the device's DEVX record and its port count: 0, or EIO when the device is
// gone or in fatal state (as for every verbs query).
int rdma_sim_devx_caps(ibv_device* device, rdmasim::ShmDevx* caps, uint32_t* num_ports);
// ibv_open_device with what the provider asks of the kernel (rdmasim::kDevxNone, kDevxTry,
// kDevxRequire): NULL and errno on failure.
ibv_context* rdma_sim_open_device(ibv_device* device, int devx_mode);
// The context's DEVX uid: 0 when it is not a DEVX context.
uint32_t rdma_sim_context_uid(ibv_context* context);
// One command on the context's connection, as an ioctl on its cmd_fd: sends `request` (one line,
// without its newline) with `send_fd` attached unless it is -1, and reads the one-line reply into
// `reply` (without its newline) and the fd that came with it into *recv_fd (-1: none). Returns 0,
// or EIO when the simulator is gone. Serialised per context.
int rdma_sim_context_command(ibv_context* context, const char* request, int send_fd, char* reply,
                             size_t reply_size, int* recv_fd);
// The modelled firmware latency (rdma-sim --query-latency-us), for a firmware command.
void rdma_sim_model_latency(ibv_context* context);

}  // extern "C"
