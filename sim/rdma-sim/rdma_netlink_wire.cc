#include "rdma_netlink_wire.h"

#include <linux/netlink.h>

#include <cstring>

#include "netlink_wire.h"

namespace rdmasim::rdma_netlink_wire {

using namespace netlink_wire;

uint16_t nldev_ops(Kernel k) {
  // 6.1 ends with STAT_GET_STATUS (24); 6.12 has RES_SRQ_GET_RAW, NEWDEV, DELDEV and MONITOR.
  return k == Kernel::kNone ? 25 : 29;
}

uint16_t max_attr(Kernel k) {
  // 6.1 ends with STAT_HWCOUNTER_DYNAMIC (95); 6.12 with SYS_ATTR_MONITOR_MODE.
  return k == Kernel::kNone ? 95 : kAttrMonitorMode;
}

bool attributes_valid(std::span<const uint8_t> message, Kernel k) {
  size_t at = sizeof(nlmsghdr);
  while (at < message.size()) {
    if (message.size() - at < sizeof(nlattr)) return false;  // trailing bytes
    uint16_t len, type;
    std::memcpy(&len, message.data() + at, 2);
    std::memcpy(&type, message.data() + at + 2, 2);
    type &= NLA_TYPE_MASK;
    if (len < sizeof(nlattr) || len > message.size() - at) return false;
    if (type == 0 || type > max_attr(k)) return false;
    at += align4(len);
  }
  return true;
}

void put_sys(std::vector<uint8_t>& out, Kernel k, uint32_t pid, uint32_t seq) {
  const size_t at = begin_message(out, nldev_type(kCmdSysGet), 0, seq, pid);
  put_num<uint8_t>(out, kAttrNetnsMode, 1);  // ib_devices_shared_netns, the default
  if (k != Kernel::kNone) {
    put_num<uint8_t>(out, kAttrPrivilegedQkey, 0);
    put_num<uint8_t>(out, kAttrMonitorMode, 1);
  }
  put_num<uint8_t>(out, kAttrCopyOnFork, 1);
  end_message(out, at);
}

void put_device_event(std::vector<uint8_t>& out, Event e, uint32_t index, const std::string& name) {
  // A multicast: port id 0, seq 0, no flags.
  const size_t at = begin_message(out, nldev_type(kCmdMonitor), 0, 0, 0);
  put_num<uint32_t>(out, kAttrDevIndex, index);
  put_string(out, kAttrDevName, name);
  put_num<uint8_t>(out, kAttrEventType, static_cast<uint8_t>(e));
  end_message(out, at);
}

void put_netdev_event(std::vector<uint8_t>& out, Event e, uint32_t index, const std::string& name,
                      uint32_t port, uint32_t ndev_index, const std::string& ndev_name) {
  const size_t at = begin_message(out, nldev_type(kCmdMonitor), 0, 0, 0);
  put_num<uint32_t>(out, kAttrDevIndex, index);
  put_string(out, kAttrDevName, name);
  put_num<uint32_t>(out, kAttrPortIndex, port);
  if (!ndev_name.empty()) {
    put_num<uint32_t>(out, kAttrNdevIndex, ndev_index);
    put_string(out, kAttrNdevName, ndev_name);
  }
  put_num<uint8_t>(out, kAttrEventType, static_cast<uint8_t>(e));
  end_message(out, at);
}

}  // namespace rdmasim::rdma_netlink_wire
