// Internals of the stand-in libibverbs.so.1 (see docs/simulator.md).
//
// This library is loaded into programs we do not control (ibv_devinfo, the daemon, test
// programs, possibly uninstrumented), so it is written in a restricted C++: no exceptions, no
// RTTI, no allocation through operator new and no C++ runtime, only libc. Every failure becomes
// an errno, as in the real library.
#pragma once

#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "common/shm_layout.h"

// Symbol versioning as in rdma-core's map file: the newest implementation of a symbol that also
// has an old-ABI variant is bound with "@@" (default), the old one with "@".
#define STANDIN_LATEST(sym, ver) __attribute__((symver(#sym "@@" ver)))
#define STANDIN_COMPAT(sym, ver) __attribute__((symver(#sym "@" ver)))
#define STANDIN_EXPORT __attribute__((visibility("default")))

namespace standin {

// A call the stand-in does not model fails with errno EOPNOTSUPP and the call's own failure
// value: NULL, the error number itself, or -1 (the calls that report failure as -1 and errno).
template <typename T>
T* unsupported() {
  errno = EOPNOTSUPP;
  return nullptr;
}
inline int unsupported_rc() {
  errno = EOPNOTSUPP;
  return EOPNOTSUPP;
}
inline int unsupported_minus_one() {
  errno = EOPNOTSUPP;
  return -1;
}

// One mapped state file. A fabric stays mapped while any device or context refers to it, so a
// context opened before the simulator restarted keeps a valid (if frozen) view.
struct Fabric {
  int fd;  // -1: the file is only mapped
  rdmasim::ShmFabric* shm;
  size_t size;
  dev_t st_dev;
  ino_t st_ino;
  bool writable;  // false when the state file could only be opened read-only: counters not kept
  int refs;       // atomic
  char dir[PATH_MAX];
  char sysfs[PATH_MAX];  // dir + "/sys"
};

void fabric_ref(Fabric* f);
void fabric_unref(Fabric* f);
// The simulator still holds its lock on the state file and has not marked it stopped.
bool fabric_alive(const Fabric* f);
// The fabric named by $RDMA_SIM_DIR, with a new reference; nullptr and *err (ENOSYS) when there is
// none. Called with the device list lock held.
Fabric* fabric_current(int* err);
// Path of the simulated sysfs root for ibv_get_sysfs_path(), or nullptr.
const char* fabric_sysfs_root();

// struct ibv_device plus what the stand-in needs to find the device in the state file.
struct Device {
  ibv_device dev;  // first member: an ibv_device* is a Device*
  uint32_t magic;
  int refs;  // atomic: the persistent list, each returned list entry, each open context
  Fabric* fabric;
  int32_t index;
  uint32_t uverbs;
  uint32_t slot;
  uint64_t node_guid;  // host order, read once when the device first appeared (as the netlink one)
  uint32_t provider;   // rdmasim::devx::Provider: which provider rdma-core would have matched
  Device* next;        // the process-wide persistent list
};
inline constexpr uint32_t kDeviceMagic = 0x53494d44;  // "SIMD"

void device_ref(Device* d);
void device_unref(Device* d);
inline Device* to_device(ibv_device* d) {
  return reinterpret_cast<Device*>(d);
}

struct Context {
  verbs_context vctx;  // ibv_context is vctx.context, its last member (verbs_get_ctx relies on it)
  Device* device;
  uint64_t id;
  uint32_t ctx_slot;
  uint32_t devx_uid;         // 0: not a DEVX context
  pthread_mutex_t cmd_lock;  // one DEVX command at a time on the connection
};
inline Context* to_context(ibv_context* c) {
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(c) - offsetof(Context, vctx) -
                                    offsetof(verbs_context, context));
}

// Reads the device's record consistently (seqlock) and calls fn(record) with it. Returns 0, or
// EIO when the device is gone (unplugged, slot reused, simulator stopped) or in fatal state. A
// device whose removal is pending still answers, as a driver without disassociate does until its
// last user closes. fn may run more than once (seqlock retry) and must only copy data out; its
// last run is the one that counts.
template <typename Fn>
int read_device(const Device* d, Fn&& fn);

// Applies the modelled firmware latency (rdma-sim --query-latency-us) of the device's fabric.
void model_query_latency(const Fabric* f);

// Accounting: counters of the context's record in the state file.
void register_ack_context(const Context* c);
void unregister_ack_context(const Context* c);
void count_event_read(const Context* c);
void count_event_acked(uint32_t token);
uint32_t ack_token(const Context* c);
// One query made through ctx: `counter` is ShmContext::port_queries, gid_queries or pkey_queries.
void count_query(ibv_context* ctx, uint64_t rdmasim::ShmContext::*counter);

// The connection to the simulator: sends all of buf; reads a one-line reply (with its newline)
// and the fd that came with it (-1: none).
bool send_all(int fd, const char* buf, size_t len);
bool recv_reply(int fd, char* line, size_t size, int* passed_fd);

// ibv_open_device, asking the simulator for a DEVX context as `devx_mode` says (protocol.h).
ibv_context* open_context(Device* d, int devx_mode);

// Implementations shared between exported entry points.
int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len);
int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size);
int query_gid_entry(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                    uint32_t flags, size_t entry_size);
int query_pkey(ibv_context* ctx, uint8_t port, int index, __be16* pkey);
int read_sysfs_file(const char* dir, const char* file, char* buf, size_t size);

// --- template implementation ------------------------------------------------------------------

bool seqlock_stalled(const Fabric* f, unsigned spins);

template <typename Fn>
int read_device(const Device* d, Fn&& fn) {
  const Fabric* f = d->fabric;
  const rdmasim::ShmDevice& rec = f->shm->devices[d->slot];
  for (unsigned spins = 0;; ++spins) {
    const uint32_t s1 = rdmasim::load_acquire(rec.seq);
    if (s1 & 1u) {
      if (seqlock_stalled(f, spins)) return EIO;
      continue;
    }
    int err = 0;
    const auto state = static_cast<rdmasim::SlotState>(rdmasim::load_relaxed(rec.state));
    if (!rdmasim::load_relaxed(f->shm->header.alive) ||
        rdmasim::load_relaxed(rec.index) != d->index)
      err = EIO;
    else if (state == rdmasim::SlotState::kLive || state == rdmasim::SlotState::kRemoving)
      fn(rec);
    else
      err = EIO;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (rdmasim::load_relaxed(rec.seq) == s1) return err;
  }
}

}  // namespace standin
