// The status line for the service manager (STATUS=): counts and wording.
#include "core/service_status.h"

#include <gtest/gtest.h>

namespace rdma_eventd::daemon {
namespace {

DeviceView device(const std::string& name, std::vector<PortState> states) {
  DeviceView d;
  d.name = name;
  for (size_t i = 0; i < states.size(); ++i) {
    PortView p;
    p.info.port = static_cast<uint32_t>(i + 1);
    p.info.state = states[i];
    d.ports.push_back(p);
  }
  return d;
}

TEST(ServiceStatus, CountsDevicesPortsUpAndDownAndSubscribers) {
  const DeviceView a = device("mlx5_0", {PortState::kActive});
  const DeviceView b = device("mlx5_1", {PortState::kDown, PortState::kActiveDefer});
  const DeviceView c = device("mlx5_2", {PortState::kInit, PortState::kArmed});
  EXPECT_EQ(service_status_text({&a, &b, &c}, 12u),
            "3 devices, 2 ports up, 3 down, 12 subscribers");
}

TEST(ServiceStatus, OneOfEachIsSingular) {
  const DeviceView a = device("mlx5_0", {PortState::kActive, PortState::kDown});
  EXPECT_EQ(service_status_text({&a}, 1u), "1 device, 1 port up, 1 down, 1 subscriber");
}

TEST(ServiceStatus, NoDeviceSaysItWaits) {
  EXPECT_EQ(service_status_text({}, 0u), "waiting for RDMA devices, 0 subscribers");
}

TEST(ServiceStatus, WithoutTheSocketSaysSo) {
  const DeviceView a = device("mlx5_0", {PortState::kDown});
  EXPECT_EQ(service_status_text({&a}, std::nullopt),
            "1 device, 0 ports up, 1 down, no subscriber socket");
}

}  // namespace
}  // namespace rdma_eventd::daemon
