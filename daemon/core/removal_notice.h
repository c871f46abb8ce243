// Whether the kernel tells the daemon at once that an open device is going, by the driver of
// the device's parent (sysfs class/infiniband/<name>/device/driver).
//
// When a device is unregistered, ib_uverbs_remove_one() (drivers/infiniband/core/uverbs_main.c)
// disassociates every open context of a driver with ops.disassociate_ucontext: each gets one
// IB_EVENT_DEVICE_FATAL and the removal goes on. A driver without it makes the kernel wait
// until every user has closed the device, and the RDMA netlink monitor's UNREGISTER is sent
// only after that wait (__ib_unregister_device(): disable_device() first): the one sign left
// is the device leaving the list, which udev's "remove" of its uverbs node or a rescan finds.
//
// Only drivers known to disassociate count: mlx5_ib and mlx4_ib (their ib_device_ops set
// disassociate_ucontext in the kernels read; when each gained it was not checked), whose RDMA
// devices hang off the PCI function (or the mlx5 sub-function) that mlx5_core or mlx4_core
// drives. Any other driver, and a device with no
// parent at all (rxe and siw, virtual devices in current kernels), is taken not to: a rescan
// that finds nothing costs one wakeup, a removal never seen holds the kernel's unregister.
#pragma once

#include <string>
#include <string_view>

namespace rdma_eventd::daemon {

// `parent_driver`: the driver's name ("mlx5_core"), "" for a device without a parent.
bool removal_announced(std::string_view parent_driver);

// Whether the RDMA netlink monitor of a kernel of this release (uname -r: "6.13.0-1-amd64")
// announces renames: RDMA_RENAME_EVENT came with Linux 6.13; 6.12's monitor has none, and a
// release that cannot be read is taken to have none.
bool kernel_announces_renames(std::string_view release);

// Why a device's removal may not be announced, for the log: "its parent's driver, bnxt_en, is
// not known to disassociate its users" or "it has no parent device: a software device such as
// rxe or siw".
std::string unannounced_because(std::string_view parent_driver);

}  // namespace rdma_eventd::daemon
