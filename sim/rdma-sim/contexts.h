// The open contexts, as the simulator sees them: for each, the connection that stands for the
// context (its closing closes the context), the write end of its async event pipe and the backlog
// the pipe cannot hold yet. Unaffiliated events are delivered to every open context of a device.
// The connection also carries the stand-in libmlx5's DEVX commands (common/protocol.h), which a
// handler answers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "byte_queue.h"
#include "common/shm_layout.h"
#include "event_loop.h"
#include "unique_fd.h"

namespace rdmasim {

// A context as a DEVX command sees it.
struct ContextView {
  uint64_t id;
  int pid;
  int32_t device_index;
  std::string device_name;
  uint32_t devx_uid;  // 0: not a DEVX context
  bool silenced;      // disassociated: every command fails with EIO
};
// One reply line (without its newline) and the fd it passes, if any.
struct ContextReply {
  std::string line;
  UniqueFd fd;
};
using ContextRequestHandler =
    std::function<ContextReply(const ContextView& context, const std::string& line, UniqueFd fd)>;

class ContextRegistry {
 public:
  // on_closed(context_id, device_index) runs (outside any callback of the closed context) after a
  // context closed. on_request answers each command line a context sends.
  ContextRegistry(EventLoop& loop, ShmFabric& shm, std::function<void(uint64_t, int32_t)> on_closed,
                  ContextRequestHandler on_request);
  ~ContextRegistry();
  ContextRegistry(const ContextRegistry&) = delete;
  ContextRegistry& operator=(const ContextRegistry&) = delete;

  // Answers an OPEN request on conn: creates the context and its pipe and sends "OK id slot"
  // with the pipe's read end. Returns the context id, or 0 (conn dropped) on failure.
  uint64_t open(UniqueFd conn, int32_t device_index, const std::string& device_name, int pid,
                uint32_t devx_uid);
  // Refuses an OPEN request: sends "ERR errno" and drops the connection.
  static void refuse(UniqueFd conn, int err);

  // Queues one event to every open context of the device that is not silenced; returns how many.
  size_t deliver(int32_t device_index, uint32_t type, uint64_t element);
  // Queues one event to one context (raw injection); false if it is not open.
  bool deliver_to(uint64_t context_id, int32_t device_index, uint32_t type, uint64_t element);
  // The device was disassociated: its contexts get nothing more, ever.
  void silence(int32_t device_index);
  // Writes what the pipes can take now; the rest goes out as readers drain them.
  void flush();
  // Destroys the contexts that closed during the last dispatch round.
  void reap();

  size_t open_count(int32_t device_index) const;
  size_t open_count() const;
  // Open DEVX contexts of the device: each holds one of the firmware's UCTX objects.
  size_t devx_count(int32_t device_index) const;
  std::vector<int> open_pids(int32_t device_index) const;
  nlohmann::json stats() const;

 private:
  struct Context;
  void closed(Context* c);
  // One event for `c`: into its backlog unless its reader is gone, counted either way.
  void queue(Context* c, const AsyncEventDesc& ev);
  nlohmann::json context_json(const Context& c) const;
  void on_readable(Context* c, uint32_t events);
  uint32_t take_slot(uint64_t id);

  EventLoop& loop_;
  ShmFabric& shm_;
  std::function<void(uint64_t, int32_t)> on_closed_;
  ContextRequestHandler on_request_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Context>> open_;   // by id
  std::map<int32_t, std::vector<Context*>> by_device_;  // the open ones, in opening order
  std::vector<std::unique_ptr<Context>> closing_;
  std::vector<Context*> dirty_;  // have a backlog to flush
  std::vector<bool> slot_busy_;
  std::vector<nlohmann::json> history_;  // closed contexts, final counters
  uint64_t opened_total_ = 0;
  uint64_t closed_total_ = 0;
  uint64_t queued_total_closed_ = 0;
  uint64_t read_total_closed_ = 0;
  uint64_t acked_total_closed_ = 0;
  int pipe_size_ = 0;
};

}  // namespace rdmasim
