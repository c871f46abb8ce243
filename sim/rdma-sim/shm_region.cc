#include "shm_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "throw_errno.h"

namespace rdmasim {
namespace {

flock whole_file(short type) {
  flock fl{};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  return fl;
}

}  // namespace

bool try_lock_fd(int fd) {
  flock fl = whole_file(F_WRLCK);
  return fcntl(fd, F_OFD_SETLK, &fl) == 0;
}

bool is_locked(int fd) {
  flock fl = whole_file(F_RDLCK);
  return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

ShmRegion ShmRegion::create(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) throw_errno("cannot remove old " + path);
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!fd) throw_errno("cannot create " + path);
  // Like /dev/infiniband/uverbs*, open to every user: clients add to their counters.
  if (fchmod(fd.get(), 0666) != 0) throw_errno("cannot chmod " + path);
  if (ftruncate(fd.get(), sizeof(ShmFabric)) != 0) throw_errno("cannot size " + path);
  if (!try_lock_fd(fd.get())) throw_errno("cannot lock " + path);
  void* mem = mmap(nullptr, sizeof(ShmFabric), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (mem == MAP_FAILED) throw_errno("cannot map " + path);
  auto* shm = static_cast<ShmFabric*>(mem);
  ShmHeader& h = shm->header;
  std::memcpy(h.magic, kShmMagic, sizeof h.magic);
  h.version = kShmVersion;
  h.header_size = sizeof(ShmHeader);
  h.total_size = sizeof(ShmFabric);
  h.device_size = sizeof(ShmDevice);
  h.context_size = sizeof(ShmContext);
  h.channel_size = sizeof(ShmChannel);
  h.simulator_pid = static_cast<int32_t>(getpid());
  for (ShmDevice& d : shm->devices)
    d.index = -1;
  store_release(h.alive, 1u);
  return ShmRegion(std::move(fd), shm);
}

ShmRegion::ShmRegion(ShmRegion&& other) noexcept
    : fd_(std::move(other.fd_)), shm_(std::exchange(other.shm_, nullptr)) {}

ShmRegion::~ShmRegion() {
  if (shm_) munmap(shm_, sizeof(ShmFabric));
}

void ShmRegion::publish(int slot, const DeviceModel& d, SlotState state, int32_t index,
                        uint32_t uverbs) {
  ShmDevice& rec = shm_->devices[slot];
  seq_write_begin(rec);
  rec.state = static_cast<uint32_t>(state);
  rec.index = index;
  rec.uverbs = uverbs;
  std::memset(rec.name, 0, sizeof rec.name);
  std::memcpy(rec.name, d.name.data(), std::min(d.name.size(), sizeof rec.name - 1));
  rec.node_guid = d.node_guid;
  rec.node_type = static_cast<uint32_t>(d.node_type);
  rec.transport_type = static_cast<uint32_t>(transport_for(d.node_type));
  rec.num_comp_vectors = d.num_comp_vectors;
  rec.phys_port_cnt = static_cast<uint32_t>(d.ports.size());
  rec.attr = d.attr;
  rec.devx = devx_caps(d);
  for (size_t p = 0; p < d.ports.size(); ++p) {
    const Port& src = d.ports[p];
    ShmPort& dst = rec.ports[p];
    dst.attr = src.attr;
    std::memset(dst.pkeys, 0, sizeof dst.pkeys);
    std::copy(src.pkeys.begin(), src.pkeys.end(), dst.pkeys);
    for (size_t i = 0; i < static_cast<size_t>(kMaxGids); ++i) {
      ShmGid& g = dst.gids[i];
      if (i < src.gids.size() && src.gids[i].valid) {
        std::memcpy(g.raw, src.gids[i].raw.data(), sizeof g.raw);
        g.type = src.gids[i].type;
        g.ifindex = src.gids[i].ifindex;
        g.valid = 1;
      } else {
        g = ShmGid{};
      }
    }
  }
  seq_write_end(rec);
}

void ShmRegion::set_state(int slot, SlotState state) {
  ShmDevice& rec = shm_->devices[slot];
  seq_write_begin(rec);
  rec.state = static_cast<uint32_t>(state);
  seq_write_end(rec);
}

void ShmRegion::free_slot(int slot) {
  ShmDevice& rec = shm_->devices[slot];
  seq_write_begin(rec);
  rec.state = static_cast<uint32_t>(SlotState::kFree);
  rec.index = -1;
  seq_write_end(rec);
}

void ShmRegion::mark_stopped() {
  if (shm_) store_release(shm_->header.alive, 0u);
}

}  // namespace rdmasim
