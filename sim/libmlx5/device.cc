// mlx5dv_is_supported, mlx5dv_open_device and mlx5dv_devx_general_cmd.
//
// rdma-core v44 (providers/mlx5/mlx5.c, verbs.c): a device is mlx5 when the mlx5 provider claimed
// it; mlx5dv_open_device opens it like ibv_open_device, asking the kernel for a DEVX context
// (mandatory with MLX5DV_CONTEXT_FLAGS_DEVX, else with a silent fallback); a DEVX command is an
// ioctl on the context (execute_ioctl: 0 or a positive errno, errno set too).
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/protocol.h"
#include "standin_mlx5.h"

namespace mlx5standin {
namespace {

// A made-up syndrome for the firmware statuses the simulator reports, with the status in its low
// byte; real firmware reports its own.
constexpr uint32_t kSyndrome = 0x51d0e000;

// The general commands of the kernel's devx_is_general_cmd() whose opcodes rdma-core v44's
// mlx5_ifc.h names, and those devx_is_whitelist_cmd() allows without a DEVX context.
bool is_general_cmd(uint16_t opcode) {
  switch (opcode) {
    case rdmasim::devx::kOpQueryHcaCap:
    case 0x10a:  // QUERY_ISSI
    case 0x740:  // QUERY_ESW_FUNCTIONS
    case 0x752:  // QUERY_ESW_VPORT_CONTEXT
    case 0x754:  // QUERY_NIC_VPORT_CONTEXT
    case 0x760:  // QUERY_ROCE_ADDRESS
    case 0x842:  // QUERY_LAG
      return true;
    default:
      return false;
  }
}

bool is_whitelist_cmd(uint16_t opcode) {
  return opcode == rdmasim::devx::kOpQueryHcaCap || opcode == 0x740 || opcode == 0x752;
}

// A command the firmware refuses: its status and syndrome in the output, EREMOTEIO (the kernel's
// mlx5_cmd_do() since 5.19; rdma-core turns it into an errno with mlx5_get_cmd_status_err()).
int firmware_status(uint8_t* out, uint8_t status) {
  out[0] = status;
  const uint32_t syndrome = htobe32(kSyndrome | status);
  memcpy(out + 4, &syndrome, sizeof syndrome);
  return fail(EREMOTEIO);
}

}  // namespace

bool is_mlx5(ibv_device* device) {
  RdmaSimDevice d;
  return device && rdma_sim_device(device, &d) == 0 &&
         d.provider == static_cast<uint32_t>(rdmasim::devx::Provider::kMlx5);
}

int command(ibv_context* context, const char* request, int send_fd, char* reply_args, size_t size,
            int* recv_fd) {
  char reply[128];
  if (int err = rdma_sim_context_command(context, request, send_fd, reply, sizeof reply, recv_fd))
    return err;
  int err = 0;
  if (strncmp(reply, "OK", 2) == 0 && (reply[2] == '\0' || reply[2] == ' ')) {
    snprintf(reply_args, size, "%s", reply[2] ? reply + 3 : "");
    return 0;
  }
  if (*recv_fd >= 0) close(*recv_fd);
  *recv_fd = -1;
  return sscanf(reply, "ERR %d", &err) == 1 && err > 0 ? err : EIO;
}

}  // namespace mlx5standin

using mlx5standin::fail;

MLX5_STANDIN_EXPORT bool mlx5dv_is_supported(ibv_device* device) {
  return mlx5standin::is_mlx5(device);
}

MLX5_STANDIN_EXPORT ibv_context* mlx5dv_open_device(ibv_device* device, mlx5dv_context_attr* attr) {
  if (!mlx5standin::is_mlx5(device)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  // mlx5_alloc_context(): no comp_mask, and no flag but MLX5DV_CONTEXT_FLAGS_DEVX.
  if (attr && (attr->comp_mask || (attr->flags & ~uint32_t{MLX5DV_CONTEXT_FLAGS_DEVX}))) {
    errno = EINVAL;
    return nullptr;
  }
  return rdma_sim_open_device(device,
                              attr && attr->flags ? rdmasim::kDevxRequire : rdmasim::kDevxTry);
}

MLX5_STANDIN_EXPORT int mlx5dv_devx_general_cmd(ibv_context* context, const void* in, size_t inlen,
                                                void* out, size_t outlen) {
  namespace devx = rdmasim::devx;
  // No mlx5 DEVX operations for another provider's context: EOPNOTSUPP, errno untouched.
  if (!mlx5standin::is_mlx5(context->device)) return EOPNOTSUPP;
  rdmasim::ShmDevx caps;
  uint32_t num_ports = 0;
  if (int err = rdma_sim_devx_caps(context->device, &caps, &num_ports)) return fail(err);
  // Firmware without UCTX: the kernel registers no DEVX method, the ioctl names none.
  if (!caps.log_max_uctx) return fail(EPROTONOSUPPORT);
  // The attributes' minimum sizes: the general command headers.
  if (inlen < devx::kCmdHeaderSize || outlen < devx::kCmdHeaderSize) return fail(EINVAL);
  const auto* cmd = static_cast<const uint8_t*>(in);
  const uint16_t opcode = devx::get_be16(cmd);
  // devx_get_uid(): a whitelisted query may use the driver's own uid; anything else needs a
  // DEVX context. Then only general commands pass (devx_is_general_cmd).
  if (!rdma_sim_context_uid(context) && !mlx5standin::is_whitelist_cmd(opcode)) return fail(EINVAL);
  if (!mlx5standin::is_general_cmd(opcode)) return fail(EINVAL);

  rdma_sim_model_latency(context);
  auto* reply = static_cast<uint8_t*>(out);
  memset(reply, 0, outlen);
  if (opcode != devx::kOpQueryHcaCap)
    return mlx5standin::firmware_status(reply, devx::kStatusBadOp);
  if (outlen < devx::kQueryHcaCapOutSize)
    return mlx5standin::firmware_status(reply, devx::kStatusBadOutputLength);
  const uint16_t op_mod = devx::get_be16(cmd + 6);  // (capability type << 1) | current
  if (!devx::encode_hca_cap(caps, num_ports, static_cast<uint16_t>(op_mod >> 1),
                            reply + devx::kCmdHeaderSize))
    return mlx5standin::firmware_status(reply, devx::kStatusBadParam);
  return 0;
}
