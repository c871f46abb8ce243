#include "core/service_status.h"

namespace rdma_eventd::daemon {
namespace {

std::string count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string service_status_text(const std::vector<const DeviceView*>& devices,
                                std::optional<uint64_t> subscribers) {
  std::string text;
  if (devices.empty()) {
    text = "waiting for RDMA devices";
  } else {
    uint64_t up = 0;
    uint64_t down = 0;
    for (const DeviceView* d : devices) {
      for (const PortView& p : d->ports) {
        const bool active =
            p.info.state == PortState::kActive || p.info.state == PortState::kActiveDefer;
        ++(active ? up : down);
      }
    }
    text = count(devices.size(), "device", "devices") + ", " + count(up, "port up", "ports up") +
           ", " + std::to_string(down) + " down";
  }
  text += subscribers ? ", " + count(*subscribers, "subscriber", "subscribers")
                      : ", no subscriber socket";
  return text;
}

}  // namespace rdma_eventd::daemon
