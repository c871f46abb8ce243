#include "rdma_netlink_standin.h"

#include <linux/netlink.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "netlink_wire.h"
#include "rdma_eventd/internal/enum_names.h"

namespace rdmasim {

namespace wire = rdma_netlink_wire;
using Kernel = wire::Kernel;
using wire::Event;

RdmaNetlinkStandIn::RdmaNetlinkStandIn(EventLoop& loop, std::string path, Kernel kernel)
    : NetlinkStandIn(loop, std::move(path)), kernel_(kernel) {}

void RdmaNetlinkStandIn::on_message(const Peer& c, std::span<const uint8_t> message) {
  netlink_wire::Header h;
  netlink_wire::read_header(message, 0, &h);
  int error = 0;
  // rdma_nl_rcv_skb: what is not a request (but for RDMA_NL_LS's answers, which the stand-in
  // does not take) and control messages are only acknowledged when asked to.
  if ((h.flags & NLM_F_REQUEST) && h.type >= NLMSG_MIN_TYPE) error = answer(c, message);
  if (error) ++stats_.errors;
  if (error || (h.flags & NLM_F_ACK)) {
    std::vector<uint8_t> out;
    netlink_wire::put_error(out, c.port_id, message, error);
    server_.send(c, std::move(out));
  }
}

// rdma_nl_rcv_msg and nldev_sys_get_doit; returns the errno of the NLMSG_ERROR, 0 when answered.
int RdmaNetlinkStandIn::answer(const Peer& c, std::span<const uint8_t> message) {
  netlink_wire::Header h;
  netlink_wire::read_header(message, 0, &h);
  const unsigned client = h.type >> 10;
  const unsigned op = h.type & ((1u << 10) - 1);
  if (client >= wire::kNumClients) return EINVAL;
  if (client != wire::kNldevClient) return EOPNOTSUPP;  // iWARP port mapper, local services
  // get_cb_table: no such command, or one with neither doit nor dump (0, 8, MONITOR).
  if (op >= wire::nldev_ops(kernel_) || op == 0 || op == 8 || op == wire::kCmdMonitor)
    return EINVAL;
  if (op != wire::kCmdSysGet) return EOPNOTSUPP;
  if (h.flags & NLM_F_DUMP) return EINVAL;  // SYS_GET has no dumpit
  if (!wire::attributes_valid(message, kernel_)) return EINVAL;
  std::vector<uint8_t> out;
  wire::put_sys(out, kernel_, c.port_id, h.seq);
  server_.send(c, std::move(out));
  return 0;
}

void RdmaNetlinkStandIn::notify(const std::vector<uint8_t>& message) {
  ++stats_.notifications;
  server_.send_all(message);
}

// ib_register_device -> ib_device_notify_register: REGISTER, then NETDEV_ATTACH for each port
// that has a netdev (rxe and mlx5 set it before registering, so no ATTACH came earlier).
void RdmaNetlinkStandIn::ib_device_added(const DeviceModel& device, int32_t index) {
  if (kernel_ == Kernel::kNone) return;
  std::vector<uint8_t> m;
  wire::put_device_event(m, Event::kRegister, static_cast<uint32_t>(index), device.name);
  notify(m);
  for (size_t p = 0; p < device.ports.size(); ++p) {
    const Port& port = device.ports[p];
    if (port.netdev.empty()) continue;
    m.clear();
    wire::put_netdev_event(m, Event::kNetdevAttach, static_cast<uint32_t>(index), device.name,
                           static_cast<uint32_t>(p + 1), port.netdev_ifindex, port.netdev);
    notify(m);
  }
}

// __ib_unregister_device: UNREGISTER once the device is disabled (its clients, uverbs among
// them, are gone), and no NETDEV_DETACH: free_netdevs() sends none.
void RdmaNetlinkStandIn::ib_device_removed(const DeviceModel& device, int32_t index) {
  if (kernel_ == Kernel::kNone) return;
  std::vector<uint8_t> m;
  wire::put_device_event(m, Event::kUnregister, static_cast<uint32_t>(index), device.name);
  notify(m);
}

// ib_device_rename (6.13): RENAME with the new name.
void RdmaNetlinkStandIn::ib_device_renamed(const std::string&, const DeviceModel& device,
                                           int32_t index) {
  if (kernel_ != Kernel::kMonitor) return;
  std::vector<uint8_t> m;
  wire::put_device_event(m, Event::kRename, static_cast<uint32_t>(index), device.name);
  notify(m);
}

// In Kernel's order.
constexpr const char* kKernelNames[] = {"monitor", "rename-less", "none"};

bool parse_rdma_netlink_kernel(const std::string& text, rdma_netlink_wire::Kernel* kernel) {
  const auto k = rdma_eventd::internal::enum_from_name<Kernel>(kKernelNames, text);
  if (k) *kernel = *k;
  return k.has_value();
}

const char* rdma_netlink_kernel_name(rdma_netlink_wire::Kernel kernel) {
  return rdma_eventd::internal::enum_name(kKernelNames, kernel, "?");
}

}  // namespace rdmasim
