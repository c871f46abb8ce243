// The devlink instances an open RDMA device concerns, read from sysfs (core/devlink_map says
// the rule). The sysfs root is the one the device's own path lies in (libibverbs' ibdev_path:
// /sys/class/infiniband/NAME on a host), so a port's netdev is looked up beside it.
#pragma once

#include <string>

#include "core/device_view.h"
#include "core/devlink_map.h"

namespace rdma_eventd::daemon {

// What cannot be read (no parent device: rxe; no netdev: an InfiniBand port) is left out. A
// bond's lower netdevs are read from its lower_NAME links.
DevlinkHandles read_devlink_handles(const std::string& ibdev_path, const DeviceView& view);

}  // namespace rdma_eventd::daemon
