// The simulator's side of the shared state file (common/shm_layout.h): creation, the liveness
// lock, and publishing device records under their seqlock.
#pragma once

#include <string>

#include "common/shm_layout.h"
#include "model.h"
#include "unique_fd.h"

namespace rdmasim {

class ShmRegion {
 public:
  // Creates a fresh state file at `path` (replacing a stale one: clients that still map the old
  // file keep their own copy), maps it and takes the lock that tells clients the fabric is live.
  // Throws std::system_error.
  static ShmRegion create(const std::string& path);

  ShmRegion(ShmRegion&& other) noexcept;
  ShmRegion& operator=(ShmRegion&&) = delete;
  ShmRegion(const ShmRegion&) = delete;
  ShmRegion& operator=(const ShmRegion&) = delete;
  ~ShmRegion();

  ShmFabric& fabric() { return *shm_; }
  const ShmFabric& fabric() const { return *shm_; }

  // Rewrites a device record (everything clients read) in one seqlock section.
  void publish(int slot, const DeviceModel& d, SlotState state, int32_t index, uint32_t uverbs);
  void set_state(int slot, SlotState state);
  void free_slot(int slot);

  // Marks the fabric stopped: clients' queries fail with EIO from now on.
  void mark_stopped();

 private:
  ShmRegion(UniqueFd fd, ShmFabric* shm) : fd_(std::move(fd)), shm_(shm) {}
  UniqueFd fd_;
  ShmFabric* shm_ = nullptr;
};

// Takes an OFD write lock on fd for the life of the open file description, or reports who holds
// it (pid from the state file header when known).
bool try_lock_fd(int fd);
bool is_locked(int fd);

}  // namespace rdmasim
