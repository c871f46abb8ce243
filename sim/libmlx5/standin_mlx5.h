// Internals of the stand-in libmlx5.so.1 (docs/simulator.md, "DEVX"). Restricted C++ like the
// stand-in libibverbs: no exceptions, no C++ runtime, every failure an errno.
#pragma once

#include <errno.h>
#include <infiniband/mlx5dv.h>

#include "common/devx.h"
#include "common/protocol.h"
#include "common/standin_private.h"

#define MLX5_STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace mlx5standin {

// rdma-core's is_mlx5_dev(): the device's provider is mlx5 (fixed when the device was listed).
bool is_mlx5(ibv_device* device);

// Sets errno to err and returns it: an ioctl's failure as rdma-core's execute_ioctl reports it.
inline int fail(int err) {
  errno = err;
  return err;
}

// One DEVX command on the context's connection: 0 and the reply after "OK" (and the fd that came
// with it), or the errno of "ERR <errno>" (EIO when the simulator is gone).
int command(ibv_context* context, const char* request, int send_fd, char* reply_args, size_t size,
            int* recv_fd);

}  // namespace mlx5standin
