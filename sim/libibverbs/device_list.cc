// ibv_get_device_list and the device accessors, with rdma-core's re-scan semantics: every call
// re-reads the fabric, survivors keep their struct ibv_device, removed devices are dropped, and
// new devices get new structs placed first, in index order (rdma-core prepends them).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

namespace standin {
namespace {

pthread_mutex_t g_list_lock = PTHREAD_MUTEX_INITIALIZER;
Device* g_devices = nullptr;  // the persistent list, guarded by g_list_lock

// What one scan of the fabric sees of a listed device.
struct Seen {
  uint32_t slot;
  int32_t index;
  uint32_t uverbs;
  uint32_t node_type;
  uint32_t transport_type;
  uint64_t node_guid;
  uint32_t provider;
  char name[rdmasim::kNameMax];
  bool matched;
};

bool snapshot_slot(const Fabric* f, uint32_t slot, Seen* out) {
  const rdmasim::ShmDevice& rec = f->shm->devices[slot];
  for (unsigned spins = 0;; ++spins) {
    const uint32_t s1 = rdmasim::load_acquire(rec.seq);
    if (s1 & 1u) {
      if (seqlock_stalled(f, spins)) return false;
      continue;
    }
    const auto state = static_cast<rdmasim::SlotState>(rdmasim::load_relaxed(rec.state));
    const bool listed = state == rdmasim::SlotState::kLive || state == rdmasim::SlotState::kFatal;
    if (listed) {
      out->slot = slot;
      out->index = rec.index;
      out->uverbs = rec.uverbs;
      out->node_type = rec.node_type;
      out->transport_type = rec.transport_type;
      out->node_guid = rec.node_guid;
      out->provider = rec.devx.provider;
      memcpy(out->name, rec.name, sizeof out->name);
      out->name[sizeof out->name - 1] = '\0';
      out->matched = false;
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (rdmasim::load_relaxed(rec.seq) == s1) return listed;
  }
}

Device* make_device(Fabric* f, const Seen& s) {
  auto* d = static_cast<Device*>(calloc(1, sizeof(Device)));
  if (!d) return nullptr;
  d->magic = kDeviceMagic;
  d->refs = 1;  // the persistent list's reference
  fabric_ref(f);
  d->fabric = f;
  d->index = s.index;
  d->uverbs = s.uverbs;
  d->slot = s.slot;
  d->node_guid = s.node_guid;
  d->provider = s.provider;
  d->dev.node_type = static_cast<ibv_node_type>(s.node_type);
  d->dev.transport_type = static_cast<ibv_transport_type>(s.transport_type);
  snprintf(d->dev.name, sizeof d->dev.name, "%s", s.name);
  snprintf(d->dev.dev_name, sizeof d->dev.dev_name, "uverbs%u", s.uverbs);
  if (snprintf(d->dev.dev_path, sizeof d->dev.dev_path, "%s/class/infiniband_verbs/uverbs%u",
               f->sysfs, s.uverbs) >= static_cast<int>(sizeof d->dev.dev_path) ||
      snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "%s/class/infiniband/%s", f->sysfs,
               s.name) >= static_cast<int>(sizeof d->dev.ibdev_path)) {
    fabric_unref(f);
    free(d);
    return nullptr;
  }
  return d;
}

// Returns the number of listed devices, or -errno. Updates the persistent list like rdma-core's
// ibverbs_get_device_list(); on failure the persistent list is left as it was.
int rescan(Fabric* f) {
  Seen seen[rdmasim::kMaxDevices];
  int n = 0;
  for (uint32_t slot = 0; slot < static_cast<uint32_t>(rdmasim::kMaxDevices); ++slot)
    if (snapshot_slot(f, slot, &seen[n])) ++n;
  // Netlink dumps devices in index order.
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && seen[j - 1].index > seen[j].index; --j) {
      Seen t = seen[j];
      seen[j] = seen[j - 1];
      seen[j - 1] = t;
    }

  // Survivors: same uverbsN and same index (rdma-core's same_sysfs_dev in netlink mode). A
  // rename keeps both, so the survivor keeps its old name and ibdev_path.
  int count = 0;
  for (Device** pp = &g_devices; *pp;) {
    Device* d = *pp;
    Seen* match = nullptr;
    for (int i = 0; i < n && !match; ++i)
      if (!seen[i].matched && d->fabric == f && d->uverbs == seen[i].uverbs &&
          d->index == seen[i].index)
        match = &seen[i];
    if (match) {
      match->matched = true;
      ++count;
      pp = &d->next;
    } else {
      *pp = d->next;
      d->next = nullptr;
      device_unref(d);
    }
  }
  // New devices go first, in ascending index order.
  Device* head = nullptr;
  Device** tail = &head;
  for (int i = 0; i < n; ++i) {
    if (seen[i].matched) continue;
    Device* d = make_device(f, seen[i]);
    if (!d) continue;  // like a device no provider claims: silently omitted
    *tail = d;
    tail = &d->next;
    ++count;
  }
  *tail = g_devices;
  g_devices = head;
  return count;
}

}  // namespace

void device_ref(Device* d) {
  __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
}

void device_unref(Device* d) {
  if (__atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  fabric_unref(d->fabric);
  d->magic = 0;
  free(d);
}

}  // namespace standin

using standin::Device;
using standin::to_device;

extern "C" {

STANDIN_EXPORT STANDIN_LATEST(ibv_get_device_list,
                              "IBVERBS_1.1") ibv_device** standin_get_device_list_1_1(int* num) {
  if (num) *num = 0;
  pthread_mutex_lock(&standin::g_list_lock);
  ibv_device** list = nullptr;
  int err = 0;
  standin::Fabric* f = standin::fabric_current(&err);
  if (!f) {
    errno = err;
  } else if (rdmasim::load_relaxed(f->shm->header.no_rdma)) {
    errno = ENOSYS;
  } else {
    const int n = standin::rescan(f);
    list = static_cast<ibv_device**>(calloc(static_cast<size_t>(n) + 1, sizeof(ibv_device*)));
    if (!list) {
      errno = ENOMEM;
    } else {
      int i = 0;
      for (Device* d = standin::g_devices; d && i < n; d = d->next) {
        standin::device_ref(d);
        list[i++] = &d->dev;
      }
      if (num) *num = i;
    }
  }
  if (f) standin::fabric_unref(f);
  pthread_mutex_unlock(&standin::g_list_lock);
  return list;
}

STANDIN_EXPORT STANDIN_LATEST(ibv_free_device_list,
                              "IBVERBS_1.1") void standin_free_device_list_1_1(ibv_device** list) {
  for (int i = 0; list[i]; ++i)
    standin::device_unref(to_device(list[i]));
  free(list);
}

STANDIN_EXPORT STANDIN_LATEST(ibv_get_device_name, "IBVERBS_1.1") const
    char* standin_get_device_name_1_1(ibv_device* device) {
  return device->name;
}

STANDIN_EXPORT STANDIN_LATEST(ibv_get_device_guid, "IBVERBS_1.1") __be64
    standin_get_device_guid_1_1(ibv_device* device) {
  // Taken from the fabric when the device appeared, as the netlink value is: still answers after
  // the device is unplugged.
  return htobe64(to_device(device)->node_guid);
}

STANDIN_EXPORT int ibv_get_device_index(ibv_device* device) {
  return to_device(device)->index;
}

}  // extern "C"
