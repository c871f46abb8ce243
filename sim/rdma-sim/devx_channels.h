// The DEVX event channels of the open contexts, as the kernel's devx.c keeps them: each channel
// has its subscriptions (one per event number, each with its cookie or eventfd) and a queue of
// events no reader took yet, with no length cap. The simulator delivers an EQE to every
// subscription of the device's channels that names its type (devx_event_notifier).
//
// A channel is a SOCK_SEQPACKET socket pair: the client gets one end (its channel fd: one record
// per read, readable while records are pending), the simulator writes records into the other and
// keeps what the socket cannot take in a backlog. What a socket cannot express lives in the
// channel's record of the shared state (ShmChannel): the overflow and destroyed bits, which the
// stand-in's mlx5dv_devx_get_event acts on, and the count of records it took.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/shm_layout.h"
#include "devx_eqe.h"
#include "event_loop.h"
#include "unique_fd.h"

namespace rdmasim {

// What one EQE did on a device's channels.
struct DevxCounts {
  size_t channels = 0;    // channels with at least one subscription to its type
  uint64_t queued = 0;    // records queued
  uint64_t merged = 0;    // OMIT_EV_DATA repeats merged into a subscription's pending entry
  uint64_t dropped = 0;   // lost to an injected allocation failure
  uint64_t signaled = 0;  // eventfd subscriptions signaled
};

class ChannelRegistry {
 public:
  static constexpr size_t kMaxSubscriptions = 1024;  // per channel: bounded memory

  struct Owner {
    uint64_t context_id;
    int pid;
    int32_t device_index;
    std::string device_name;
  };

  ChannelRegistry(EventLoop& loop, ShmFabric& shm);
  ~ChannelRegistry();
  ChannelRegistry(const ChannelRegistry&) = delete;
  ChannelRegistry& operator=(const ChannelRegistry&) = delete;

  // DEVX_ASYNC_EVENT_FD_ALLOC: 0 with the channel's id, slot and the client's end of its socket,
  // or an errno (EMFILE: every slot of the shared state is taken).
  int create(const Owner& owner, bool omit_data, uint64_t* id, uint32_t* slot, UniqueFd* client);
  // The channel is open and belongs to the context (the kernel's fd lookup, else EBADF).
  bool owns(uint64_t context_id, uint64_t channel_id) const;
  // Adds one subscription per event number (already validated): 0 or ENOMEM past the limit.
  int subscribe(uint64_t channel_id, const std::vector<uint16_t>& events, uint64_t cookie);
  int subscribe_fd(uint64_t channel_id, uint16_t event, UniqueFd eventfd);

  // The context closed, or the device was disassociated: its channels are destroyed as
  // devx_async_event_destroy_uobj does (pending events freed, subscriptions gone, readers see
  // EAGAIN, or EIO when blocking, and poll reports IN|RDNORM|RDHUP). Each stays until its fd
  // closes.
  void destroy_context(uint64_t context_id);
  void destroy_device(int32_t device_index);
  // The same for the device's open channels (one by id, or all) while the device and its
  // contexts go on: a channel ended under its reader. Returns the ids destroyed.
  std::vector<uint64_t> destroy_channels(int32_t device_index, std::optional<uint64_t> channel_id);

  // Delivers one EQE to the device's channels.
  DevxCounts deliver(int32_t device_index, const devx::Eqe& eqe);
  // The next `count` events to be queued in data mode on the chosen channels (one by id, or
  // every data-mode channel of the device) fail to allocate: each is dropped and the channel's
  // next read returns EOVERFLOW. Returns the ids armed.
  std::vector<uint64_t> fail_allocations(int32_t device_index, std::optional<uint64_t> channel_id,
                                         uint64_t count);

  // Writes what the sockets take now; the rest goes as readers drain them.
  void flush();
  // Frees the channels whose fd closed during the last dispatch round.
  void reap();

  size_t open_count(int32_t device_index) const;
  nlohmann::json stats() const;

 private:
  struct Record {
    uint64_t cookie;
    std::array<uint8_t, 64> eqe;
  };
  static_assert(sizeof(Record) == 72);
  struct Subscription {
    uint16_t event;
    uint64_t cookie;
    UniqueFd eventfd;
    uint64_t pending_seq = 0;  // OMIT_EV_DATA: the sequence number of its queued entry
  };
  struct Channel;

  Channel* find(uint64_t id) const;
  void queue(Channel& c, Subscription& s, const devx::Eqe& eqe, DevxCounts& counts);
  bool omit_pending(const Channel& c, const Subscription& s) const;
  void flush_one(Channel& c);
  void destroy(Channel& c);
  void closed(Channel& c);
  nlohmann::json channel_json(const Channel& c) const;

  EventLoop& loop_;
  ShmFabric& shm_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Channel>> channels_;  // by id: open or destroyed
  std::map<int32_t, std::vector<Channel*>> live_;  // by device: not destroyed, in creation order
  std::vector<std::unique_ptr<Channel>> closing_;
  std::vector<Channel*> dirty_;  // have a backlog to write
  std::vector<bool> slot_busy_;
  std::vector<nlohmann::json> history_;  // the last closed channels, final counters
  uint64_t created_total_ = 0;
  uint64_t closed_total_ = 0;
  DevxCounts closed_counts_;  // queued, merged and dropped of every closed channel
  uint64_t closed_read_ = 0;
  int sndbuf_ = 0;
};

}  // namespace rdmasim
