// Names and messages shared by the simulator and the stand-in libibverbs.
//
// The fabric directory holds:
//   state      the shared state file (shm_layout.h); the running simulator holds an OFD write
//              lock on it, which is how clients tell a live fabric from a stale directory
//   sim.sock   the control socket (AF_UNIX, SOCK_STREAM)
//   sys/       the sysfs-like tree: sys/class/infiniband/<name>/..., sys/class/infiniband_verbs/
//
// Every connection starts with one request line.
//   "OPEN <device-index> <pid>\n"  from the stand-in's ibv_open_device. Reply:
//        "OK <context-id> <context-slot>\n" with the async event fd attached (SCM_RIGHTS), or
//        "ERR <errno>\n". The connection then stays open as the context's cmd_fd: closing it
//        (ibv_close_device, or the process exiting) closes the context.
//   "{...}\n"  a JSON control request from the rdma-sim CLI; one JSON reply line, then close.
#pragma once

namespace rdmasim {

inline constexpr const char* kStateFile = "state";
inline constexpr const char* kSocketFile = "sim.sock";
inline constexpr const char* kSysDir = "sys";
inline constexpr const char* kLogFile = "rdma-sim.log";
inline constexpr const char* kDirEnv = "RDMA_SIM_DIR";

inline constexpr const char* kOpenVerb = "OPEN";
inline constexpr unsigned kMaxOpenLine = 128;

}  // namespace rdmasim
