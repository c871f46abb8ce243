// Port, device, GID and P_Key queries with rdma-core v44's return conventions (on a kernel with
// the ioctl GID methods):
//   ibv_query_port / ibv_query_device / the vctx ops: 0 or a positive errno
//   _ibv_query_gid_ex: 0, ENODATA (empty slot), EINVAL (bad port, index, size or flags), EIO
//   _ibv_query_gid_table: number of valid entries, or a negative errno
//   ibv_query_gid: 0 (zero GID for an empty slot) or -1 with errno
//   ibv_query_pkey: a sysfs read, 0 or -1; the value is big-endian
// errno is also set on failure, as the failing system call does in the real library.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

// verbs.h turns these into inline wrappers; the library exports the real entry points.
#undef ibv_query_port
#undef ibv_query_gid_ex
#undef ibv_query_gid_table

namespace standin {
namespace {

Device* device_of(ibv_context* ctx) {
  return to_device(ctx->device);
}

// Runs a query and, when it succeeds and a latency is modelled, waits and runs it again so the
// answer reflects the state at the end of the modelled firmware command.
template <typename Fn>
int timed_query(const Device* d, Fn&& query) {
  int err = query();
  if (err == 0 && rdmasim::load_relaxed(d->fabric->shm->header.query_latency_us) != 0) {
    model_query_latency(d->fabric);
    err = query();
  }
  return err;
}

int fail(int err) {
  if (err) errno = err;
  return err;
}

void fill_gid_entry(const rdmasim::ShmGid& g, uint32_t port, uint32_t index, ibv_gid_entry* e) {
  memcpy(e->gid.raw, g.raw, sizeof e->gid.raw);
  e->gid_index = index;
  e->port_num = port;
  e->gid_type = g.type;
  e->ndev_ifindex = g.ifindex;
}

}  // namespace

int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len) {
  count_query(ctx, &rdmasim::ShmContext::port_queries);
  const Device* d = device_of(ctx);
  ibv_port_attr tmp;
  int err = timed_query(d, [&] {
    int e = 0;
    int rc = read_device(d, [&](const rdmasim::ShmDevice& rec) {
      if (port < 1 || port > rec.phys_port_cnt) {
        e = EINVAL;
        return;
      }
      memcpy(&tmp, &rec.ports[port - 1].attr, sizeof tmp);
      e = 0;
    });
    return rc ? rc : e;
  });
  if (err) return fail(err);
  // rdma-core's __lib_query_port: a caller with the old, shorter struct gets its length only.
  if (len < sizeof tmp) {
    memcpy(attr, &tmp, len);
  } else {
    memset(attr, 0, len);
    memcpy(attr, &tmp, sizeof tmp);
  }
  return 0;
}

int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) {
  if ((input && input->comp_mask) || attr_size < sizeof(attr->orig_attr)) return fail(EINVAL);
  const Device* d = device_of(ctx);
  ibv_device_attr_ex tmp;
  const int err = timed_query(d, [&] {
    return read_device(d,
                       [&](const rdmasim::ShmDevice& rec) { memcpy(&tmp, &rec.attr, sizeof tmp); });
  });
  if (err) return fail(err);
  memset(attr, 0, attr_size);
  memcpy(attr, &tmp, attr_size < sizeof tmp ? attr_size : sizeof tmp);
  return 0;
}

int query_gid_entry(ibv_context* ctx, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                    uint32_t flags, size_t entry_size) {
  // The ioctl attribute is at most 64 KiB (rdma-core refuses to marshal more) and must hold the
  // whole v1 entry; no flags are defined.
  count_query(ctx, &rdmasim::ShmContext::gid_queries);
  if (entry_size > UINT16_MAX || entry_size < sizeof(ibv_gid_entry) || flags) return EINVAL;
  const Device* d = device_of(ctx);
  ibv_gid_entry tmp;
  const int err = timed_query(d, [&] {
    int e = 0;
    int rc = read_device(d, [&](const rdmasim::ShmDevice& rec) {
      if (port < 1 || port > rec.phys_port_cnt) {
        e = EINVAL;
        return;
      }
      const rdmasim::ShmPort& p = rec.ports[port - 1];
      if (index >= static_cast<uint32_t>(p.attr.gid_tbl_len)) {
        e = EINVAL;
        return;
      }
      const rdmasim::ShmGid& g = p.gids[index];
      if (!g.valid) {
        e = ENODATA;
        return;
      }
      fill_gid_entry(g, port, index, &tmp);
      e = 0;
    });
    return rc ? rc : e;
  });
  if (err) return err;
  // The kernel copies its struct and zeroes whatever the caller's larger struct has beyond it.
  memcpy(entry, &tmp, sizeof tmp);
  if (entry_size > sizeof tmp)
    memset(reinterpret_cast<char*>(entry) + sizeof tmp, 0, entry_size - sizeof tmp);
  return 0;
}

int query_pkey(ibv_context* ctx, uint8_t port, int index, __be16* pkey) {
  // rdma-core reads <ibdev_path>/ports/P/pkeys/I: after a rename the stale ibdev_path no longer
  // exists (ENOENT), after an unplug neither does the directory.
  count_query(ctx, &rdmasim::ShmContext::pkey_queries);
  const Device* d = device_of(ctx);
  char file[64];
  char attr[8];
  snprintf(file, sizeof file, "ports/%d/pkeys/%d", port, index);
  if (read_sysfs_file(d->dev.ibdev_path, file, attr, sizeof attr) < 0) return -1;
  model_query_latency(d->fabric);
  unsigned short val;
  if (sscanf(attr, "%hx", &val) != 1) return -1;
  *pkey = htobe16(val);
  return 0;
}

}  // namespace standin

using standin::Device;

extern "C" {

STANDIN_EXPORT STANDIN_LATEST(ibv_query_port, "IBVERBS_1.1") int standin_query_port_1_1(
    ibv_context* ctx, uint8_t port, _compat_ibv_port_attr* attr) {
  // The exported symbol keeps the struct as it was before port_cap_flags2: 48 bytes.
  constexpr size_t kCompatPortAttrSize = offsetof(ibv_port_attr, port_cap_flags2);
  static_assert(kCompatPortAttrSize == 48);
  return standin::query_port(ctx, port, reinterpret_cast<ibv_port_attr*>(attr),
                             kCompatPortAttrSize);
}

STANDIN_EXPORT STANDIN_LATEST(ibv_query_device,
                              "IBVERBS_1.1") int standin_query_device_1_1(ibv_context* ctx,
                                                                          ibv_device_attr* attr) {
  return standin::query_device_ex(ctx, nullptr, reinterpret_cast<ibv_device_attr_ex*>(attr),
                                  sizeof *attr);
}

STANDIN_EXPORT STANDIN_LATEST(ibv_query_gid,
                              "IBVERBS_1.1") int standin_query_gid_1_1(ibv_context* ctx,
                                                                       uint8_t port, int index,
                                                                       ibv_gid* gid) {
  ibv_gid_entry entry = {};
  const int err =
      standin::query_gid_entry(ctx, port, static_cast<uint32_t>(index), &entry, 0, sizeof entry);
  if (err == ENODATA) {  // an empty slot reads as the zero GID
    memset(gid, 0, sizeof *gid);
    return 0;
  }
  if (err) {
    errno = err;
    return -1;
  }
  memcpy(gid, &entry.gid, sizeof *gid);
  return 0;
}

STANDIN_EXPORT STANDIN_LATEST(ibv_query_pkey,
                              "IBVERBS_1.1") int standin_query_pkey_1_1(ibv_context* ctx,
                                                                        uint8_t port, int index,
                                                                        __be16* pkey) {
  return standin::query_pkey(ctx, port, index, pkey);
}

STANDIN_EXPORT int ibv_get_pkey_index(ibv_context* ctx, uint8_t port, __be16 pkey) {
  __be16 value;
  for (int i = 0;; ++i) {
    const int ret = standin::query_pkey(ctx, port, i, &value);
    if (ret < 0) return ret;
    if (value == pkey) return i;
  }
}

STANDIN_EXPORT int _ibv_query_gid_ex(ibv_context* ctx, uint32_t port, uint32_t index,
                                     ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  const int err = standin::query_gid_entry(ctx, port, index, entry, flags, entry_size);
  if (err) errno = err;
  return err;
}

STANDIN_EXPORT ssize_t _ibv_query_gid_table(ibv_context* ctx, ibv_gid_entry* entries,
                                            size_t max_entries, uint32_t flags, size_t entry_size) {
  standin::count_query(ctx, &rdmasim::ShmContext::gid_queries);
  // Marshalling limit (rdma-core), then the kernel's checks, in their order.
  if ((entry_size && max_entries > UINT16_MAX / entry_size) || flags || entry_size == 0 ||
      max_entries == 0) {
    errno = EINVAL;
    return -EINVAL;
  }
  const Device* d = standin::to_device(ctx->device);
  const size_t cap = max_entries < static_cast<size_t>(rdmasim::kMaxPorts * rdmasim::kMaxGids)
                         ? max_entries
                         : static_cast<size_t>(rdmasim::kMaxPorts * rdmasim::kMaxGids);
  auto* found = static_cast<ibv_gid_entry*>(calloc(cap, sizeof(ibv_gid_entry)));
  if (!found) {
    errno = ENOMEM;
    return -ENOMEM;
  }
  size_t count = 0;
  const int err = standin::timed_query(d, [&] {
    int e = 0;
    int rc = standin::read_device(d, [&](const rdmasim::ShmDevice& rec) {
      count = 0;
      e = 0;
      for (uint32_t p = 1; p <= rec.phys_port_cnt && !e; ++p) {
        const rdmasim::ShmPort& port = rec.ports[p - 1];
        for (uint32_t i = 0; i < static_cast<uint32_t>(port.attr.gid_tbl_len) && !e; ++i) {
          if (!port.gids[i].valid) continue;
          if (count == max_entries || count == cap) {
            e = EINVAL;  // more valid entries than the caller has room for
            break;
          }
          standin::fill_gid_entry(port.gids[i], p, i, &found[count++]);
        }
      }
    });
    return rc ? rc : e;
  });
  if (err) {
    free(found);
    errno = err;
    return -err;
  }
  const size_t copy = entry_size < sizeof(ibv_gid_entry) ? entry_size : sizeof(ibv_gid_entry);
  for (size_t i = 0; i < count; ++i) {
    char* out = reinterpret_cast<char*>(entries) + i * entry_size;
    memcpy(out, &found[i], copy);
    if (entry_size > copy) memset(out + copy, 0, entry_size - copy);
  }
  free(found);
  return static_cast<ssize_t>(count);
}

// enum ibv_gid_type_sysfs of rdma-core's private driver.h (not installed): the two type strings
// sysfs knows, "IB/RoCE v1" and "RoCE v2".
enum GidTypeSysfs : int { kGidTypeSysfsIbRoceV1 = 0, kGidTypeSysfsRoceV2 = 1 };

STANDIN_EXPORT int ibv_query_gid_type(ibv_context* ctx, uint8_t port, unsigned int index,
                                      GidTypeSysfs* type) {
  ibv_gid_entry entry = {};
  const int err = standin::query_gid_entry(ctx, port, index, &entry, 0, sizeof entry);
  if (err == ENODATA) {  // kept API behaviour for an empty slot
    *type = kGidTypeSysfsIbRoceV1;
    return 0;
  }
  if (err) {
    errno = err;
    return -1;
  }
  *type = entry.gid_type == IBV_GID_TYPE_ROCE_V2 ? kGidTypeSysfsRoceV2 : kGidTypeSysfsIbRoceV1;
  return 0;
}

}  // extern "C"
