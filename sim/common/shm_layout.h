// The simulated fabric's shared state: one file in the fabric directory, created and written only
// by the simulator, mapped by every process that loads the stand-in libibverbs.
//
// Why shared memory: a query on real hardware is one ioctl; a round trip to the simulator per
// query would make queries cost tens of microseconds and serialize every client behind the
// simulator's event loop. With the state mapped, a query is a seqlock-protected copy (well under a
// microsecond) and the simulator never blocks a client.
//
// Layout rules: plain-old-data only, fixed size, no pointers. The simulator is the only writer of
// device records (single-threaded, seqlock per device); clients only add to the per-context
// read/ack counters, with atomic increments. The header carries the version and the sizes so a
// mismatched stand-in refuses the file instead of misreading it.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rdmasim {

inline constexpr char kShmMagic[8] = {'R', 'D', 'M', 'A', 'S', 'I', 'M', '\0'};
inline constexpr uint32_t kShmVersion = 3;

inline constexpr int kMaxDevices = 64;
inline constexpr int kMaxPorts = 4;
inline constexpr int kMaxGids = 256;
inline constexpr int kMaxPkeys = 128;
inline constexpr int kMaxContexts = 4096;
inline constexpr int kMaxChannels = 4096;  // DEVX event channels, over all contexts
inline constexpr int kNameMax = 64;        // IB_DEVICE_NAME_MAX, as in struct ibv_device.name

// What a device slot currently holds. Listed: kLive and kFatal. Queries work: kLive and kRemoving.
enum class SlotState : uint32_t {
  kFree = 0,      // no device (never used, or removed)
  kLive = 1,      // registered and working
  kFatal = 2,     // firmware fatal error: listed, but every verbs command fails with EIO
  kRemoving = 3,  // unplugged from a driver that cannot disassociate: gone from the list,
                  // still served to the contexts that keep it alive until they close
};

struct ShmGid {
  uint8_t raw[16];
  uint32_t type;     // enum ibv_gid_type: 0 IB, 1 RoCE v1, 2 RoCE v2
  uint32_t ifindex;  // netdev ifindex, 0 when the entry has no netdev
  uint32_t valid;    // 0: empty slot
  uint32_t reserved;
};
static_assert(sizeof(ShmGid) == 32);

struct ShmPort {
  ibv_port_attr attr;  // the full v44 struct (52 bytes), port_cap_flags2 included
  uint32_t reserved[3];
  uint16_t pkeys[kMaxPkeys];  // host order; pkey_tbl_len entries are meaningful
  ShmGid gids[kMaxGids];      // gid_tbl_len entries are meaningful
};

// What a device's provider, firmware and driver offer for DEVX (common/devx.h). Only mlx5 devices
// have DEVX; the event masks are those of HCA capability page 0x14, in host order: event n is bit
// n % 64 of word n / 64, as the kernel reads them (devx.c is_valid_events).
struct ShmDevx {
  uint32_t provider;           // Provider
  uint32_t log_max_uctx;       // 0: firmware without UCTX: no DEVX at all
  uint32_t event_cap;          // 0: legacy rules (only PORT_CHANGE, unaffiliated)
  uint32_t port_module_event;  // the general HCA capability bits of the same names
  uint32_t temp_warn_event;
  uint32_t general_notification_event;
  uint32_t port_type;  // HCA cap port_type: 0 InfiniBand, 1 Ethernet (the first port's)
  uint32_t reserved;
  uint64_t user_affiliated_events[4];
  uint64_t user_unaffiliated_events[4];
};

struct ShmDevice {
  uint32_t seq;     // seqlock: odd while the simulator rewrites this record
  uint32_t state;   // SlotState
  int32_t index;    // netlink-style device index, never reused; -1 when free
  uint32_t uverbs;  // N of uverbsN
  char name[kNameMax];
  uint64_t node_guid;  // host order
  uint32_t node_type;  // enum ibv_node_type
  uint32_t transport_type;
  uint32_t num_comp_vectors;
  uint32_t phys_port_cnt;
  ibv_device_attr_ex attr;  // attr.orig_attr.node_guid etc. are big-endian as the verbs API returns
  ShmDevx devx;
  ShmPort ports[kMaxPorts];
};

// Accounting for one context, in slot (id % kMaxContexts) or wherever the simulator put it (the
// open reply names the slot). `queued` is written by the simulator; the other counters are
// incremented by the stand-in in the client process: events read and acked, and the queries
// made through the context (what a firmware command costs on hardware), so tests can check
// how many a program makes.
struct ShmContext {
  uint64_t id;  // 0: slot never used
  int32_t pid;
  int32_t device_index;
  uint64_t queued;
  uint64_t read;
  uint64_t acked;
  uint64_t reserved;
  uint64_t port_queries;  // ibv_query_port, whatever the entry point
  uint64_t gid_queries;   // ibv_query_gid, _ibv_query_gid_ex, _ibv_query_gid_table
  uint64_t pkey_queries;  // ibv_query_pkey
};

// A DEVX event channel (sim/rdma-sim/devx_channels.h). Its records travel over a socket; what a
// read() on a socket cannot say, the simulator says here and the stand-in libmlx5's
// mlx5dv_devx_get_event acts on: the kernel's is_overflow_err and is_destroyed bits. The stand-in
// counts the records it takes, which is how the simulator knows which OMIT_EV_DATA entries are
// still pending.
struct ShmChannel {
  uint64_t id;         // 0: slot free
  uint32_t overflow;   // 1: an event was dropped (allocation failure); the next read says EOVERFLOW
  uint32_t destroyed;  // 1: the context closed or the device was disassociated
  uint64_t read;       // records mlx5dv_devx_get_event took (written by the stand-in)
  uint64_t reserved[5];
};

struct ShmHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint64_t total_size;
  uint32_t device_size;
  uint32_t context_size;
  uint32_t channel_size;
  uint32_t reserved0;
  uint32_t alive;             // cleared by the simulator on a clean exit
  uint32_t no_rdma;           // 1: behave as a kernel without RDMA (list: NULL, ENOSYS)
  uint32_t query_latency_us;  // modelled firmware latency for queries
  int32_t simulator_pid;
  uint64_t reserved[8];
};

struct ShmFabric {
  ShmHeader header;
  ShmDevice devices[kMaxDevices];
  ShmContext contexts[kMaxContexts];
  ShmChannel channels[kMaxChannels];
};

// One record of the async event fd: struct ib_uverbs_async_event_desc.
struct AsyncEventDesc {
  uint64_t element;
  uint32_t event_type;
  uint32_t reserved;
};
static_assert(sizeof(AsyncEventDesc) == 16);

// --- Atomic access to fields of the mapped file ---------------------------------------------

template <typename T>
inline T load_acquire(const T& v) {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(std::memory_order_acquire);
}
template <typename T>
inline T load_relaxed(const T& v) {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(std::memory_order_relaxed);
}
template <typename T>
inline void store_release(T& v, T value) {
  std::atomic_ref<T>(v).store(value, std::memory_order_release);
}
template <typename T>
inline void store_relaxed(T& v, T value) {
  std::atomic_ref<T>(v).store(value, std::memory_order_relaxed);
}
template <typename T>
inline void fetch_add(T& v, T value) {
  std::atomic_ref<T>(v).fetch_add(value, std::memory_order_relaxed);
}

// Writer side of the per-device seqlock (the simulator only; it is single-threaded).
inline void seq_write_begin(ShmDevice& d) {
  std::atomic_ref<uint32_t> seq(d.seq);
  seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
}
inline void seq_write_end(ShmDevice& d) {
  std::atomic_ref<uint32_t> seq(d.seq);
  seq.store(seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace rdmasim
