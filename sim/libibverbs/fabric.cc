// Finding and mapping the simulated fabric, liveness, modelled latency and accounting.
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/protocol.h"
#include "standin.h"

namespace standin {
namespace {

Fabric* g_current = nullptr;  // guarded by the device list lock (device_list.cc)

// Per-process table used to attribute ibv_ack_async_event calls (which get no context) to the
// context that returned the event; see ack_token().
pthread_mutex_t g_ack_lock = PTHREAD_MUTEX_INITIALIZER;
struct AckEntry {
  uint64_t id;
  Fabric* fabric;
};
AckEntry g_ack_table[rdmasim::kMaxContexts];

bool header_ok(const rdmasim::ShmFabric* shm, size_t size) {
  const rdmasim::ShmHeader& h = shm->header;
  return memcmp(h.magic, rdmasim::kShmMagic, sizeof h.magic) == 0 &&
         h.version == rdmasim::kShmVersion && h.header_size == sizeof(rdmasim::ShmHeader) &&
         h.device_size == sizeof(rdmasim::ShmDevice) &&
         h.context_size == sizeof(rdmasim::ShmContext) &&
         h.channel_size == sizeof(rdmasim::ShmChannel) && h.total_size == size &&
         size == sizeof(rdmasim::ShmFabric);
}

Fabric* map_fabric(const char* dir, const char* path) {
  bool writable = true;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EROFS)) {
    writable = false;
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return nullptr;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != sizeof(rdmasim::ShmFabric)) {
    close(fd);
    return nullptr;
  }
  void* mem = mmap(nullptr, sizeof(rdmasim::ShmFabric),
                   writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  auto* f = static_cast<Fabric*>(calloc(1, sizeof(Fabric)));
  if (!f || !header_ok(static_cast<rdmasim::ShmFabric*>(mem), sizeof(rdmasim::ShmFabric)) ||
      snprintf(f->dir, sizeof f->dir, "%s", dir) >= static_cast<int>(sizeof f->dir) ||
      snprintf(f->sysfs, sizeof f->sysfs, "%s/%s", dir, rdmasim::kSysDir) >=
          static_cast<int>(sizeof f->sysfs)) {
    free(f);
    munmap(mem, sizeof(rdmasim::ShmFabric));
    close(fd);
    return nullptr;
  }
  // The file is not kept open (a real libibverbs holds no fd between calls either, and programs
  // print their context fd numbers): the liveness check opens it again by path.
  close(fd);
  f->fd = -1;
  f->shm = static_cast<rdmasim::ShmFabric*>(mem);
  f->size = sizeof(rdmasim::ShmFabric);
  f->st_dev = st.st_dev;
  f->st_ino = st.st_ino;
  f->writable = writable;
  f->refs = 1;
  return f;
}

void spin_until(const timespec& deadline) {
  timespec now;
  do {
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec < deadline.tv_sec ||
           (now.tv_sec == deadline.tv_sec && now.tv_nsec < deadline.tv_nsec));
}

}  // namespace

void fabric_ref(Fabric* f) {
  __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void fabric_unref(Fabric* f) {
  if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  munmap(f->shm, f->size);
  free(f);
}

bool fabric_alive(const Fabric* f) {
  if (!rdmasim::load_acquire(f->shm->header.alive)) return false;
  // The simulator holds an OFD write lock on the state file for its whole life. F_OFD_GETLK only
  // tests for it (no lock is taken, so a client can never get in the simulator's way), and a
  // simulator that crashed has no lock left: the fabric is dead even though the file remains.
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", f->dir, rdmasim::kStateFile) >=
      static_cast<int>(sizeof path))
    return false;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_RDLCK;
  fl.l_whence = SEEK_SET;
  // The same file (not a newer simulator's) and still locked by its simulator.
  const bool alive = fstat(fd, &st) == 0 && st.st_dev == f->st_dev && st.st_ino == f->st_ino &&
                     fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return alive;
}

Fabric* fabric_current(int* err) {
  *err = ENOSYS;  // what this machine's kernel answers: no RDMA subsystem
  const char* dir = getenv(rdmasim::kDirEnv);
  if (!dir || !*dir) return nullptr;
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, rdmasim::kStateFile) >=
      static_cast<int>(sizeof path))
    return nullptr;
  struct stat st;
  if (stat(path, &st) != 0) return nullptr;
  if (!g_current || g_current->st_dev != st.st_dev || g_current->st_ino != st.st_ino ||
      strcmp(g_current->dir, dir) != 0) {
    Fabric* f = map_fabric(dir, path);
    if (!f) return nullptr;
    if (g_current) fabric_unref(g_current);
    g_current = f;
  }
  if (!fabric_alive(g_current)) return nullptr;
  fabric_ref(g_current);
  *err = 0;
  return g_current;
}

const char* fabric_sysfs_root() {
  static char root[PATH_MAX];  // computed once, like rdma-core's ibv_get_sysfs_path
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, [] {
    const char* dir = getenv(rdmasim::kDirEnv);
    if (dir && *dir &&
        snprintf(root, sizeof root, "%s/%s", dir, rdmasim::kSysDir) < static_cast<int>(sizeof root))
      return;
    root[0] = '\0';
  });
  return root[0] ? root : nullptr;
}

bool seqlock_stalled(const Fabric* f, unsigned spins) {
  // The simulator rewrites a record in well under a microsecond; a sequence that stays odd means
  // it died mid-write. Check rarely so the common case is a plain spin.
  if ((spins & 0xfffu) != 0xfffu) {
    __builtin_ia32_pause();
    return false;
  }
  return !fabric_alive(f);
}

void model_query_latency(const Fabric* f) {
  const uint32_t us = rdmasim::load_relaxed(f->shm->header.query_latency_us);
  if (us == 0) return;
  // A firmware command blocks the caller in the kernel: sleep, as it would. The timer slack of a
  // normal thread (50 us) would make short latencies far too long, so the last 100 us are spent
  // yielding on the clock instead, which keeps the modelled latency accurate to a few us.
  timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += us / 1000000;
  deadline.tv_nsec += static_cast<long>(us % 1000000) * 1000;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  if (us > 200) {
    timespec early = deadline;
    early.tv_nsec -= 100000;
    if (early.tv_nsec < 0) {
      early.tv_sec -= 1;
      early.tv_nsec += 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &early, nullptr) == EINTR) {
    }
  }
  spin_until(deadline);
}

// --- accounting -----------------------------------------------------------------------------

// ibv_ack_async_event() receives only the event, so the stand-in leaves a token in the 4 bytes of
// padding after event_type: 4 bits of magic, 16 bits of the context id, 12 bits of its slot.
uint32_t ack_token(const Context* c) {
  return 0xa0000000u | (static_cast<uint32_t>(c->id & 0xffffu) << 12) | (c->ctx_slot & 0xfffu);
}

void register_ack_context(const Context* c) {
  pthread_mutex_lock(&g_ack_lock);
  g_ack_table[c->ctx_slot] = AckEntry{c->id, c->device->fabric};
  pthread_mutex_unlock(&g_ack_lock);
}

void unregister_ack_context(const Context* c) {
  pthread_mutex_lock(&g_ack_lock);
  if (g_ack_table[c->ctx_slot].id == c->id) g_ack_table[c->ctx_slot] = AckEntry{0, nullptr};
  pthread_mutex_unlock(&g_ack_lock);
}

void count_event_read(const Context* c) {
  const Fabric* f = c->device->fabric;
  if (!f->writable) return;
  rdmasim::ShmContext& rec = f->shm->contexts[c->ctx_slot];
  if (rdmasim::load_relaxed(rec.id) == c->id) rdmasim::fetch_add(rec.read, uint64_t{1});
}

void count_query(ibv_context* ctx, uint64_t rdmasim::ShmContext::*counter) {
  const Context* c = to_context(ctx);
  const Fabric* f = c->device->fabric;
  if (!f->writable) return;
  rdmasim::ShmContext& rec = f->shm->contexts[c->ctx_slot];
  if (rdmasim::load_relaxed(rec.id) == c->id) rdmasim::fetch_add(rec.*counter, uint64_t{1});
}

void count_event_acked(uint32_t token) {
  static_assert(rdmasim::kMaxContexts == 4096, "the ack token keeps 12 bits of slot");
  if ((token & 0xf0000000u) != 0xa0000000u) return;
  const uint32_t slot = token & 0xfffu;
  const uint32_t id_bits = (token >> 12) & 0xffffu;
  pthread_mutex_lock(&g_ack_lock);
  const AckEntry e = g_ack_table[slot];
  if (e.id != 0 && (e.id & 0xffffu) == id_bits && e.fabric->writable) {
    rdmasim::ShmContext& rec = e.fabric->shm->contexts[slot];
    if (rdmasim::load_relaxed(rec.id) == e.id) rdmasim::fetch_add(rec.acked, uint64_t{1});
  }
  pthread_mutex_unlock(&g_ack_lock);
}

}  // namespace standin
