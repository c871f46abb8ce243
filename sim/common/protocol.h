// Names and messages shared by the simulator and the stand-in libibverbs.
//
// The fabric directory holds:
//   state      the shared state file (shm_layout.h); the running simulator holds an OFD write
//              lock on it, which is how clients tell a live fabric from a stale directory
//   sim.sock   the control socket (AF_UNIX, SOCK_STREAM)
//   sys/       the sysfs-like tree: sys/class/infiniband/<name>/..., sys/class/infiniband_verbs/
//
// Every connection starts with one request line.
//   "OPEN <device-index> <pid> [<devx>]\n"  from the stand-in's ibv_open_device. <devx> is what
//        the provider asks of the kernel: 0 nothing (not mlx5), 1 a DEVX context if the firmware
//        can (rdma-core's mlx5 provider, ibv_open_device), 2 a DEVX context or failure
//        (mlx5dv_open_device with MLX5DV_CONTEXT_FLAGS_DEVX). Reply:
//        "OK <context-id> <context-slot> <devx-uid>\n" with the async event fd attached
//        (SCM_RIGHTS; uid 0: not a DEVX context), or "ERR <errno>\n". The connection then stays
//        open as the context's cmd_fd: closing it (ibv_close_device, or the process exiting)
//        closes the context. It also carries the DEVX commands of the stand-in libmlx5, one at a
//        time, each answered by one line ("ERR <errno>" on failure):
//          "CHANNEL <flags>"                          "OK <channel-id> <channel-slot>" + its fd
//          "SUBSCRIBE <channel-id> <cookie> <events-size-in-bytes> <event>..."      "OK"
//          "SUBSCRIBE_FD <channel-id> <event>" + the eventfd                        "OK"
//   "{...}\n"  a JSON control request from the rdma-sim CLI; one JSON reply line, then close.
#pragma once

namespace rdmasim {

inline constexpr const char* kStateFile = "state";
inline constexpr const char* kSocketFile = "sim.sock";
inline constexpr const char* kSysDir = "sys";
inline constexpr const char* kLogFile = "rdma-sim.log";
inline constexpr const char* kDirEnv = "RDMA_SIM_DIR";
// The devlink stand-in (a SOCK_SEQPACKET socket speaking the kernel's generic netlink), and the
// variable that points rdma-eventd at it.
inline constexpr const char* kDevlinkSocketFile = "devlink.sock";
inline constexpr const char* kDevlinkSocketEnv = "RDMA_EVENTD_DEVLINK_SOCKET";
// The RDMA netlink stand-in (a SOCK_SEQPACKET socket speaking the kernel's NETLINK_RDMA: SYS_GET
// and the device monitor), and the variable that points rdma-eventd at it.
inline constexpr const char* kRdmaNetlinkSocketFile = "rdma-netlink.sock";
inline constexpr const char* kRdmaNetlinkSocketEnv = "RDMA_EVENTD_RDMA_NETLINK_SOCKET";

inline constexpr const char* kOpenVerb = "OPEN";
inline constexpr unsigned kMaxOpenLine = 128;
inline constexpr const char* kChannelVerb = "CHANNEL";
inline constexpr const char* kSubscribeVerb = "SUBSCRIBE";
inline constexpr const char* kSubscribeFdVerb = "SUBSCRIBE_FD";
inline constexpr unsigned kMaxContextRequest = 512;  // the longest: SUBSCRIBE with 17 events

// What OPEN asks for (see above).
inline constexpr int kDevxNone = 0;
inline constexpr int kDevxTry = 1;
inline constexpr int kDevxRequire = 2;

}  // namespace rdmasim
