// The host's inventory end to end (docs/health.md, "The inventory"): the real daemon on the
// simulator, its state directory kept across a reboot. A reboot is what the daemon sees of
// one: its per-boot state written on another boot (the document's boot id is not this boot's),
// its inventory as it left it. The dead adapter does not probe and the healthy one takes its
// name (vendor stacks name mlx5_N by probe order): every client sees the missing one, by
// node GUID, until it is back or an operator retires it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon_process.h"
#include "paths.h"
#include "process.h"
#include "temp_dir.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

const std::string kInventoryGuid0 = "0c42:a103:00f6:5e44";  // mlx5_0, one port
const std::string kInventoryGuid1 = "0c42:a103:006d:0b3a";  // mlx5_1, two ports

DaemonOptions inventory_options(const std::string& state_dir) {
  DaemonOptions o;
  o.config_json =
      json{{"health", {{"enabled", true}}}, {"socket", {{"mode", "0666"}, {"allow_users", {4242}}}}}
          .dump();
  o.env = {{"STATE_DIRECTORY", state_dir}};
  return o;
}

rdmatest::CommandResult inventory_ctl(DaemonProcess& d, std::vector<std::string> args) {
  args.insert(args.begin(), {rdmatest::bin("rdma-eventctl"), "--socket", d.socket()});
  return rdmatest::run_command(args);
}

// The port_health record of `device`/`port` with verdict `health`, among the next records.
Record inventory_verdict(DaemonProcess& d, const std::string& device, uint32_t port,
                         const std::string& health) {
  return next_record_where(
      d,
      [&](const Record& r) {
        return r.event == EventKind::kPortHealth && r.device == device && r.port == port &&
               r.health == health;
      },
      "port_health " + health + " for " + device + "/" + std::to_string(port));
}

// What a reboot leaves of the per-boot state: a document of another boot.
void reboot_host(const rdmatest::TempDir& state) {
  const std::string path = state.file("port-health.json");
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  json doc = json::parse(in);
  doc["boot_id"] = "00000000-0000-4000-8000-000000000001";
  std::ofstream(path) << doc.dump() << "\n";
}

// Every port healthy, then stopped: the inventory has both adapters.
void inventory_first_boot(const SimFabric& sim, const rdmatest::TempDir& state) {
  DaemonProcess d(sim, inventory_options(state.path()));
  inventory_verdict(d, "mlx5_1", 2, "healthy");
  const auto inv = inventory_ctl(d, {"inventory"});
  EXPECT_EQ(inv.exit_code(), 0) << inv.err;
  EXPECT_EQ(inv.out.substr(0, inv.out.find('\n')), "2 adapters in the inventory, 0 missing");
  EXPECT_NE(inv.out.find("mlx5_1  " + kInventoryGuid1 +
                         "  present  ports 1 (4x EDR), 2 (4x EDR)  joined "),
            std::string::npos)
      << inv.out;
  EXPECT_EQ(d.stop().code, 0);
}

TEST(Inventory, AnAdapterThatDoesNotComeBackAfterARebootIsMissingWhateverNameTheOtherTook) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-inventory");
  inventory_first_boot(sim, state);
  reboot_host(state);
  inject(sim, {"unplug", "mlx5_0"});
  inject(sim, {"rename", "mlx5_1", "mlx5_0"});

  DaemonProcess d(sim, inventory_options(state.path()));
  EXPECT_TRUE(d.logged("inventory: 2 adapters known from " + state.file("inventory.json")))
      << d.log_tail();
  EXPECT_TRUE(d.logged("from another boot")) << d.log_tail();
  // Its record, under its GUID (its name is the other card's now), and the journal's copy.
  const Record missing = inventory_verdict(d, kInventoryGuid0, 1, "gone");
  EXPECT_EQ(missing.reason, "device_missing");
  EXPECT_EQ(missing.node_guid, kInventoryGuid0);
  const json j = journal_entry_of(d, missing);
  EXPECT_EQ(j.value("RDMA_HEALTH", ""), "gone");
  EXPECT_EQ(j.value("RDMA_HEALTH_REASON", ""), "device_missing");

  // health: one of three ports not healthy; the two of the card now named mlx5_0 are.
  const auto h = inventory_ctl(d, {"health", "--json"});
  EXPECT_EQ(h.exit_code(), 1) << h.out << h.err;
  const json body = json::parse(h.out)["health"];
  EXPECT_EQ(body["host"], "gone");
  ASSERT_EQ(body["ports"].size(), 3u) << body;
  EXPECT_EQ(body["ports"][0]["device"], kInventoryGuid0);
  EXPECT_EQ(body["ports"][0]["health"], "gone");
  EXPECT_EQ(body["ports"][0]["counted"], true);
  for (int i : {1, 2}) {
    EXPECT_EQ(body["ports"][i]["device"], "mlx5_0");
    EXPECT_EQ(body["ports"][i]["node_guid"], kInventoryGuid1);
    EXPECT_EQ(body["ports"][i]["health"], "healthy");
  }
  const auto compact = inventory_ctl(d, {"health", "--compact"});
  EXPECT_EQ(compact.out, "gone: 1 of 3 ports not healthy: " + kInventoryGuid0 + "/1 gone\n");
  const auto metrics = inventory_ctl(d, {"metrics"});
  EXPECT_NE(metrics.out.find("device=\"" + kInventoryGuid0 + "\""), std::string::npos)
      << metrics.out;

  const auto inv = inventory_ctl(d, {"inventory", "--json"});
  ASSERT_EQ(inv.exit_code(), 0) << inv.err;
  const json adapters = json::parse(inv.out)["inventory"]["adapters"];
  ASSERT_EQ(adapters.size(), 2u) << adapters;
  EXPECT_EQ(adapters[0]["node_guid"], kInventoryGuid1);
  EXPECT_EQ(adapters[0]["name"], "mlx5_0");
  EXPECT_EQ(adapters[0]["state"], "present");
  EXPECT_EQ(adapters[1]["node_guid"], kInventoryGuid0);
  EXPECT_EQ(adapters[1]["name"], "mlx5_0");
  EXPECT_EQ(adapters[1]["state"], "missing");
  EXPECT_TRUE(adapters[1].contains("missing_since"));

  // Retiring: not for anyone who may read the events; by a name two adapters had, refused.
  ASSERT_EQ(::chmod(d.dir().c_str(), 0755), 0);
  LineClient other(d.socket(), rdmatest::Credentials{4242, 4242, {}});
  other.require_json(10s, "the hello");
  other.send(R"({"op":"retire","id":1,"adapter":")" + kInventoryGuid0 + "\"}\n");
  const json denied = other.read_until(reply_to(1), 10s).back();
  EXPECT_EQ(denied["error"], "not_permitted");
  EXPECT_EQ(denied["message"],
            "only root may retire an adapter (this peer's uid is 4242); nothing changed");
  const auto ambiguous = inventory_ctl(d, {"inventory", "retire", "mlx5_0"});
  EXPECT_EQ(ambiguous.exit_code(), 76);
  EXPECT_NE(ambiguous.err.find("2 adapters of the inventory were last named 'mlx5_0'"),
            std::string::npos)
      << ambiguous.err;
  EXPECT_EQ(inventory_ctl(d, {"health"}).exit_code(), 1);

  const auto retired = inventory_ctl(d, {"inventory", "retire", kInventoryGuid0});
  EXPECT_EQ(retired.exit_code(), 0) << retired.err;
  EXPECT_EQ(retired.out.rfind("retired: mlx5_0  " + kInventoryGuid0 + "  missing since ", 0), 0u)
      << retired.out;
  EXPECT_TRUE(d.logged("inventory: adapter mlx5_0 (node GUID " + kInventoryGuid0 +
                       ", 1 port) retired by uid 0: its ports are forgotten"))
      << d.log_tail();
  const auto healthy = inventory_ctl(d, {"health"});
  EXPECT_EQ(healthy.exit_code(), 0) << healthy.out;
  EXPECT_EQ(healthy.out, "healthy: 2 ports healthy\n");
  EXPECT_EQ(d.stop().code, 0);

  // And it stays retired.
  DaemonProcess again(sim, inventory_options(state.path()));
  EXPECT_TRUE(again.logged("inventory: 1 adapter known from")) << again.log_tail();
  EXPECT_EQ(inventory_ctl(again, {"health"}).out, "healthy: 2 ports healthy\n");
}

TEST(Inventory, APortOfTheInventoryDownAfterARebootIsInServiceAndDownNotNeverUp) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-inventory");
  inventory_first_boot(sim, state);
  reboot_host(state);
  inject(sim, {"port", "down", "mlx5_1/2"});
  DaemonProcess d(sim, inventory_options(state.path()));
  const Record down = inventory_verdict(d, "mlx5_1", 2, "down");
  EXPECT_EQ(down.reason, "link_down");
  const auto h = inventory_ctl(d, {"health"});
  EXPECT_EQ(h.exit_code(), 1) << h.out;
  EXPECT_EQ(h.out.rfind("down: 1 of 3 ports not healthy: mlx5_1/2 down (link_down) since ", 0), 0u)
      << h.out;
  // A broken inventory is set aside for the operator, and the daemon starts with none.
  EXPECT_EQ(d.stop().code, 0);
  std::ofstream(state.file("inventory.json")) << "{\"version\":1,";
  DaemonProcess after(sim, inventory_options(state.path()));
  EXPECT_TRUE(after.logged("inventory: ignoring " + state.file("inventory.json")))
      << after.log_tail();
  std::ifstream aside(state.file("inventory.json.rejected"));
  std::string kept((std::istreambuf_iterator<char>(aside)), {});
  EXPECT_EQ(kept, "{\"version\":1,");
}

// health.expected_adapters: an adapter listed there that has never been in service here (a
// fresh install, a wiped state directory) is missing all the same while it is absent.
TEST(Inventory, AnExpectedAdapterThatWasNeverHereIsMissingUntilItComes) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir state("rdma-inventory");
  inject(sim, {"unplug", "mlx5_1"});
  DaemonOptions o = inventory_options(state.path());
  json config = json::parse(o.config_json);
  config["health"]["expected_adapters"] = {kInventoryGuid1, kInventoryGuid0};
  o.config_json = config.dump();
  DaemonProcess d(sim, o);

  // Its first port (its ports are not known), under its node GUID, gone and counted.
  const Record missing = inventory_verdict(d, kInventoryGuid1, 1, "gone");
  EXPECT_EQ(missing.reason, "device_missing");
  EXPECT_EQ(missing.node_guid, kInventoryGuid1);
  const auto h = inventory_ctl(d, {"health"});
  EXPECT_EQ(h.exit_code(), 1) << h.out << h.err;
  EXPECT_EQ(h.out.rfind("gone: 1 of 2 ports not healthy: " + kInventoryGuid1 +
                            "/1 gone (device_missing) since ",
                        0),
            0u)
      << h.out;
  // Not the inventory's (it was never in service here), and not for an operator to retire.
  const auto inv = inventory_ctl(d, {"inventory"});
  EXPECT_EQ(inv.out.substr(0, inv.out.find('\n')), "1 adapter in the inventory, 0 missing")
      << inv.out;
  const auto retire = inventory_ctl(d, {"inventory", "retire", kInventoryGuid1});
  EXPECT_EQ(retire.exit_code(), 76) << retire.out << retire.err;
  EXPECT_NE(retire.err.find(kInventoryGuid1 +
                            " is expected by the configuration (health.expected_adapters): "
                            "remove it there first, then reload; nothing changed"),
            std::string::npos)
      << retire.err;

  // It comes: its ports, under its name, and nothing under its GUID any more.
  inject(sim, {"replug", "mlx5_1"});
  inventory_verdict(d, "mlx5_1", 2, "healthy");
  const auto after = inventory_ctl(d, {"health", "--json"});
  EXPECT_EQ(after.exit_code(), 0) << after.out << after.err;
  const json ports = json::parse(after.out)["health"]["ports"];
  ASSERT_EQ(ports.size(), 3u) << ports;
  for (const json& p : ports) {
    EXPECT_NE(p["device"], kInventoryGuid1) << ports;
    EXPECT_EQ(p["health"], "healthy") << ports;
  }
}

}  // namespace
}  // namespace rdma_eventd::test
