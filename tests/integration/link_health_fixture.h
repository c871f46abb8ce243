// What the link quality tests share (link_health_test.cc, link_health_reads_test.cc): the
// two-adapter simulator, a daemon judging its links fast, and how its link_quality records are
// waited for.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "paths.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

// Sampled every second; one bit error in 1e12 over 5 s at mlx5_0's HDR 4x (200 Gb/s) allows
// 1e-12 * 200e9 * 5 = 1 symbol error, at mlx5_1's EDR 4x 0.5 (the bit error rule judged from
// EDR on, as a site judging raw symbol errors sets it); clean after 3 s with no window over.
inline json fast_link_health() {
  return {{"interval_s", 1},
          {"bit_errors", json::array({{{"ber", 1e-12}, {"window_s", 5}}})},
          {"bit_errors_min_speed", "edr"},
          {"link_recoveries", {{"count", 3}, {"window_s", 5}}},
          {"clean_s", 3}};
}

// The simulator's generic netlink stand-in is the daemon's: its RoCE ports' PHY counters (the
// ethtool family) and its devlink reporters come from there.
inline DaemonOptions link_options(const rdmatest::SimFabric& sim, const std::string& state_dir,
                                  json link_health = fast_link_health(),
                                  json health = {{"enabled", true}}) {
  DaemonOptions o;
  o.config_json = json{{"health", health}, {"link_health", link_health}}.dump();
  o.env = {{"STATE_DIRECTORY", state_dir}, {"RDMA_EVENTD_DEVLINK_SOCKET", sim.devlink_socket()}};
  return o;
}

inline Record next_link(DaemonProcess& d, const std::string& port, const std::string& change,
                        std::vector<Record>* skipped = nullptr) {
  return next_record_where(
      d,
      [&](const Record& r) {
        return r.event == EventKind::kLinkQuality &&
               r.device + "/" + std::to_string(r.port) == port && r.link &&
               r.link->change == change;
      },
      "link_quality " + change + " of " + port, skipped);
}

// The link_quality event of a port whose bit errors (symbol_error at `value`) grew by `count`
// within `window_s`, over the `allowed` growth at `rate_gbps`: its BER estimate is the growth
// over the bits the window carried.
inline LinkQualityEvent bad_bit_errors(uint64_t value, uint64_t count, uint64_t allowed,
                                       uint32_t window_s, double rate_gbps) {
  LinkQualityEvent e;
  e.change = "bad";
  e.fault = "bit_errors";
  e.counter = "symbol_error";
  e.value = value;
  e.count = count;
  e.allowed = allowed;
  e.window_s = window_s;
  e.rate_gbps = rate_gbps;
  e.ber = static_cast<double>(count) / (rate_gbps * 1e9 * window_s);
  return e;
}

// next_link(), which must be the first link_quality record read: one of any port before it
// fails the test. `port_errs`: how many port_err records came before it.
inline Record first_link(DaemonProcess& d, const std::string& port, const std::string& change,
                         size_t* port_errs = nullptr) {
  std::vector<Record> before;
  const Record r = next_link(d, port, change, &before);
  if (port_errs) *port_errs = 0;
  for (const Record& b : before) {
    EXPECT_NE(b.event, EventKind::kLinkQuality)
        << b.device << "/" << b.port << " " << b.link->change;
    if (port_errs) *port_errs += b.event == EventKind::kPortErr;
  }
  return r;
}

// The first link_quality record of `port` is a hidden_down of one down, link_downed at
// `value`, after `port_errs` port_err records.
inline void expect_one_hidden_down(DaemonProcess& d, const std::string& port, uint64_t value,
                                   size_t port_errs) {
  size_t seen = 0;
  const Record hidden = first_link(d, port, "hidden_down", &seen);
  EXPECT_EQ(hidden.link->count, 1u);
  EXPECT_EQ(hidden.link->value, value);
  EXPECT_EQ(seen, port_errs);
}

// The daemon's count of port samples (each port's values read and judged).
inline uint64_t link_samples(DaemonProcess& d) {
  return d.status()["link_health"]["samples"].get<uint64_t>();
}
// Waits until a sample follows the `before`th.
inline bool sampled_after(DaemonProcess& d, uint64_t before) {
  return rdmatest::wait_until([&] { return link_samples(d) > before; }, std::chrono::seconds(10));
}
// Waits until the daemon has read every port it judges once: their baselines. It reads them
// beside its loop, after its first records: what a counter gains before that read is in its
// baseline, never growth; what it gains after it is.
inline bool every_port_read(DaemonProcess& d) {
  return rdmatest::wait_until(
      [&] {
        const json st = d.status();
        const json& ports = st["link_health"]["ports"];
        if (ports.empty()) return false;
        for (const json& p : ports) {
          if (p["counters"].empty()) return false;
        }
        return true;
      },
      std::chrono::seconds(10));
}

// The two-adapter simulator, and a daemon judging its links with its state in a directory of
// its own.
class LinkHealth : public ::testing::Test {
 protected:
  // The daemon, started: its ports not read yet.
  DaemonProcess& launch(json link_health = fast_link_health(), json health = {{"enabled", true}}) {
    return d_.emplace(sim_, link_options(sim_, state_.path(), link_health, health));
  }
  // launch(), and every port read once: what the counters gain from now on is growth.
  DaemonProcess& start(json link_health = fast_link_health(), json health = {{"enabled", true}}) {
    DaemonProcess& d = launch(link_health, health);
    EXPECT_TRUE(every_port_read(d)) << d.status()["link_health"];
    return d;
  }
  // start(), and the first verdict of mlx5_0/1 taken.
  DaemonProcess& start_judged(json link_health = fast_link_health(),
                              json health = {{"enabled", true}}) {
    DaemonProcess& d = start(link_health, health);
    EXPECT_EQ(next_port_verdict(d, "mlx5_0/1", "healthy").reason, "first_seen");
    return d;
  }
  // start_judged() with the timer's reads every `interval_s` and 10 downs to flap, and a
  // second after a timer's reads (the least time between two reads of a port): the next
  // port_err read reads the port's counters, well before the next tick.
  DaemonProcess& start_between_reads(uint32_t interval_s) {
    json link = fast_link_health();
    link["interval_s"] = interval_s;
    DaemonProcess& d = start_judged(link, {{"enabled", true}, {"flap_downs", 10}});
    EXPECT_TRUE(sampled_after(d, link_samples(d)));
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    return d;
  }

  // 50 symbol errors more on mlx5_0/1, judged with its counter at 50: the first link_quality
  // record from now on is the bad of these 50 alone.
  void expect_fifty_more_symbol_errors_bad(DaemonProcess& d) {
    inject(sim_, {"counter", "add", "mlx5_0/1", "symbol_error", "50"});
    const Record bad = first_link(d, "mlx5_0/1", "bad");
    EXPECT_EQ(bad.link->count, 50u);
    EXPECT_EQ(bad.link->value, 100u);
  }

  // mlx5_0/1's symbol_error file, and what the daemon logs after "mlx5_0/1: cannot read its
  // counters " when it fails.
  std::string symbol_error_file() const {
    return sim_.dir() + "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error";
  }
  static std::string read_failure(DaemonProcess& d) {
    const std::string line = d.require_log("mlx5_0/1: cannot read its counters");
    const std::string_view from = "cannot read its counters ";
    return line.substr(line.find(from) + from.size());
  }
  // The lines of the log that say a device's counters could not be read.
  static size_t read_failure_lines(DaemonProcess& d) {
    const std::string log = d.log_tail(400);
    size_t lines = 0;
    for (size_t at = log.find("cannot read its counters"); at != std::string::npos;
         at = log.find("cannot read its counters", at + 1))
      ++lines;
    return lines;
  }

  SimFabric sim_{topology("two-adapters")};
  rdmatest::TempDir state_{"rdma-link"};
  std::optional<DaemonProcess> d_;
};

// The `link_health` block's entry of a port in a status reply (an empty object, and a failure,
// when it has none).
inline json link_port(const json& status, const std::string& device, int port) {
  for (const json& p : status["link_health"]["ports"]) {
    if (p["device"] == device && p["port"] == port) return p;
  }
  ADD_FAILURE() << device << "/" << port << " is not in " << status["link_health"];
  return json::object();
}

// Whether the daemon judged the port within 10 s: a baseline, then a read that found it clean.
// Errors counted after it are the link's own.
inline bool judged_clean(DaemonProcess& d, const std::string& device, int port) {
  return rdmatest::wait_until(
      [&] { return link_port(d.status(), device, port)["quality"] == "clean"; },
      std::chrono::seconds(10));
}

inline int64_t link_test_wall_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rdma_eventd::test
