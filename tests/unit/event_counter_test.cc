// The daemon's counts of published records (app/event_counter.h): by device, port and event
// name, down transitions from a port's state before and after, a bounded table of ports.
#include "app/event_counter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

PortInfo port_in(uint32_t port, PortState state) {
  PortInfo p;
  p.port = port;
  p.state = state;
  return p;
}

Record port_record(EventKind kind, const std::string& device, uint32_t port, PortState before,
                   PortState after) {
  Record r;
  r.event = kind;
  r.device = device;
  r.port = port;
  r.previous = port_in(port, before);
  r.port_info = port_in(port, after);
  return r;
}

Record device_record(EventKind kind, const std::string& device, uint32_t raw_element) {
  Record r;
  r.event = kind;
  r.device = device;
  r.port = raw_element;  // the raw element, not a port: counted for the device
  return r;
}

TEST(EventCounter, CountsByDevicePortAndEventName) {
  EventCounter c;
  c.count(port_record(EventKind::kPortErr, "mlx5_0", 1, PortState::kActive, PortState::kDown));
  c.count(port_record(EventKind::kPortActive, "mlx5_0", 1, PortState::kDown, PortState::kActive));
  c.count(port_record(EventKind::kPortErr, "mlx5_0", 1, PortState::kActive, PortState::kInit));
  c.count(port_record(EventKind::kLidChange, "mlx5_0", 2, PortState::kActive, PortState::kActive));
  c.count(device_record(EventKind::kDeviceFatal, "mlx5_1", 7));
  Record health;
  health.event = EventKind::kPortHealth;  // no port block, but about port 2
  health.device = "mlx5_0";
  health.port = 2;
  c.count(health);

  const StatusReply::EventCounts counts = c.counts();
  const std::vector<StatusReply::EventCount> want = {
      {"mlx5_0", 1, {{"port_active", 1}, {"port_err", 2}}, 2},
      {"mlx5_0", 2, {{"lid_change", 1}, {"port_health", 1}}, 0},
      {"mlx5_1", 0, {{"device_fatal", 1}}, 0},
  };
  EXPECT_EQ(counts.ports, want);
  EXPECT_EQ(counts.untracked, 0u);
}

TEST(EventCounter, ADownTransitionIsTheStateLeavingActive) {
  EventCounter c;
  // Already down: a second port_err is not another flap; active_defer counts as up.
  c.count(port_record(EventKind::kPortErr, "d", 1, PortState::kDown, PortState::kDown));
  c.count(port_record(EventKind::kPortState, "d", 1, PortState::kActiveDefer, PortState::kDown));
  c.count(port_record(EventKind::kPortState, "d", 1, PortState::kActive, PortState::kActiveDefer));
  Record no_previous =
      port_record(EventKind::kPortErr, "d", 1, PortState::kActive, PortState::kDown);
  no_previous.previous.reset();  // the first the daemon knows of the port
  c.count(no_previous);
  ASSERT_EQ(c.counts().ports.size(), 1u);
  EXPECT_EQ(c.counts().ports[0].down_transitions, 1u);
}

TEST(EventCounter, InterleavedDevicesAndPortsAreEachCountedAsTheirOwn) {
  // Entries found before are looked up again by port number first: records of devices whose
  // names share a prefix, of ports that share that lookup (1 and 5, 2 and 6), in turns, each
  // count only under their own device and port.
  EventCounter c;
  const std::vector<std::string> devices = {"mlx5_1", "mlx5_10", "mlx5_1 ", "mlx5_"};
  std::map<std::pair<std::string, uint32_t>, uint64_t> want;
  for (int round = 0; round < 3; ++round) {
    for (uint32_t port = 1; port <= 6; ++port) {
      for (size_t d = 0; d < devices.size(); ++d) {
        // (d + port) records of this port in this round, so that every pair's total differs
        for (size_t n = 0; n < d + port; ++n) {
          c.count(port_record(EventKind::kPortErr, devices[d], port, PortState::kDown,
                              PortState::kDown));
          ++want[{devices[d], port}];
        }
      }
    }
  }
  const StatusReply::EventCounts counts = c.counts();
  ASSERT_EQ(counts.ports.size(), want.size());
  for (const auto& p : counts.ports) {
    ASSERT_EQ(p.events.size(), 1u) << p.device << " " << p.port;
    EXPECT_EQ(p.events[0],
              (std::pair<std::string, uint64_t>{"port_err", want.at({p.device, p.port})}))
        << p.device << " " << p.port;
  }
  EXPECT_EQ(counts.untracked, 0u);
}

TEST(EventCounter, AFullTableCountsNewPortsAsUntracked) {
  EventCounter c(2);
  c.count(device_record(EventKind::kDeviceAdded, "a", 0));
  c.count(device_record(EventKind::kDeviceAdded, "b", 0));
  c.count(device_record(EventKind::kDeviceAdded, "c", 0));
  c.count(device_record(EventKind::kDeviceRemoved, "a", 0));  // known: still counted
  const StatusReply::EventCounts counts = c.counts();
  ASSERT_EQ(counts.ports.size(), 2u);
  EXPECT_EQ(counts.ports[0].events, (std::vector<std::pair<std::string, uint64_t>>{
                                        {"device_added", 1}, {"device_removed", 1}}));
  EXPECT_EQ(counts.untracked, 1u);
}

}  // namespace
}  // namespace rdma_eventd::daemon
