// The host's inventory (core/inventory): who joins and when, present and missing by node GUID
// whatever the names, retiring, finding an adapter by name or GUID, and its document, which is
// trusted only whole. Then the health model's side: a port of the inventory is in service even
// before it comes up, an absent adapter is missing under the name it had, and a gone adapter of
// the inventory is never forgotten until it is retired.
#include "core/inventory.h"

#include <gtest/gtest.h>

#include "port_health_fixture.h"

namespace rdma_eventd::daemon {
namespace {

constexpr int64_t kT0 = 1795342530000000;  // 2026-11-22T...Z
const LinkRate kHdr4{4, LinkSpeed::kHdr};
const LinkRate kHdr2{2, LinkSpeed::kHdr};

TEST(Inventory, AnAdapterJoinsWhenAPortOfItIsFirstInServiceAndKeepsItsNameAndRate) {
  Inventory inv;
  EXPECT_TRUE(inv.in_service("mlx5_0", kGuid0, 1, kHdr4, kT0));
  EXPECT_FALSE(inv.in_service("mlx5_0", kGuid0, 1, kHdr4, kT0 + 1));  // nothing new
  EXPECT_TRUE(inv.in_service("mlx5_0", kGuid0, 2, kHdr4, kT0 + 2));   // another port
  EXPECT_TRUE(inv.in_service("mlx5_0", kGuid0, 2, kHdr2, kT0 + 3));   // another rate
  EXPECT_TRUE(inv.in_service("mlx5_3", kGuid0, 1, kHdr4, kT0 + 4));   // another name
  ASSERT_EQ(inv.adapters().size(), 1u);
  const InventoryAdapter& a = inv.adapters()[0];
  EXPECT_EQ(a.node_guid, kGuid0);
  EXPECT_EQ(a.name, "mlx5_3");
  EXPECT_EQ(a.joined_us, kT0);
  EXPECT_EQ(a.ports, (std::vector<InventoryPort>{{1, kHdr4}, {2, kHdr2}}));
  EXPECT_TRUE(inv.contains(kGuid0, 2));
  EXPECT_FALSE(inv.contains(kGuid0, 3));
  // No GUID, no identity: nothing joins.
  EXPECT_FALSE(inv.in_service("rxe0", "", 1, kHdr4, kT0));
  EXPECT_FALSE(inv.in_service("rxe0", "0000:0000:0000:0000", 1, kHdr4, kT0));
  EXPECT_EQ(inv.adapters().size(), 1u);
}

TEST(Inventory, AnAbsentAdapterIsMissingSinceFirstFoundAbsentUntilPresentAgainUnderAnyName) {
  Inventory inv;
  inv.in_service("mlx5_0", kGuid0, 1, kHdr4, kT0);
  EXPECT_TRUE(inv.absent(kGuid0, kT0 + 10));
  EXPECT_FALSE(inv.absent(kGuid0, kT0 + 20));  // since the first time
  EXPECT_EQ(inv.by_guid(kGuid0)->missing_since_us, kT0 + 10);
  EXPECT_FALSE(inv.absent(kGuid1, kT0 + 20));  // not in the inventory
  EXPECT_TRUE(inv.present(kGuid0, "mlx5_1", kT0 + 30));
  EXPECT_FALSE(inv.by_guid(kGuid0)->missing());
  EXPECT_EQ(inv.by_guid(kGuid0)->name, "mlx5_1");
  EXPECT_EQ(inv.by_guid(kGuid0)->last_seen_us, kT0 + 30);
  EXPECT_FALSE(inv.present(kGuid1, "mlx5_0", kT0 + 30));  // present but never in service
  EXPECT_EQ(inv.adapters().size(), 1u);
}

TEST(Inventory, AnAdapterIsFoundByGuidOrByTheOneNameItLastHadAndRetired) {
  Inventory inv;
  inv.in_service("mlx5_0", kGuid0, 1, kHdr4, kT0);
  inv.in_service("mlx5_1", kGuid1, 1, kHdr4, kT0);
  std::string error;
  EXPECT_EQ(inv.find(kGuid1, &error), kGuid1);
  EXPECT_EQ(inv.find("mlx5_0", &error), kGuid0);
  EXPECT_EQ(inv.find("mlx5_9", &error), "");
  EXPECT_EQ(error, "no adapter of the inventory has the node GUID or the name 'mlx5_9'");
  // Two cards swapped names while one was missing: the name is ambiguous, the GUID is not.
  inv.absent(kGuid0, kT0 + 1);
  inv.present(kGuid1, "mlx5_0", kT0 + 2);
  EXPECT_EQ(inv.find("mlx5_0", &error), "");
  EXPECT_EQ(error, "2 adapters of the inventory were last named 'mlx5_0' (" + kGuid1 + ", " +
                       kGuid0 + "): name one by its node GUID");
  EXPECT_TRUE(inv.retire(kGuid0));
  EXPECT_FALSE(inv.retire(kGuid0));
  EXPECT_EQ(inv.find("mlx5_0", &error), kGuid1);
}

TEST(InventoryDocument, ReadsBackWhatItWroteAcrossBoots) {
  Inventory inv;
  inv.in_service("mlx5_0", kGuid0, 1, kHdr4, kT0);
  inv.in_service("mlx5_1", kGuid1, 1, kHdr4, kT0 + 1);
  inv.in_service("mlx5_1", kGuid1, 2, kHdr2, kT0 + 2);
  inv.absent(kGuid1, kT0 + 3);
  const std::string text = inventory_json(inv, kT0 + 4);
  auto back = inventory_from_json(text);
  ASSERT_TRUE(std::holds_alternative<Inventory>(back)) << std::get<StateRejected>(back).reason;
  EXPECT_EQ(std::get<Inventory>(back), inv);
}

// The reason a document is rejected for, or "" when it is taken.
std::string rejected(const std::string& text) {
  auto r = inventory_from_json(text);
  return std::holds_alternative<StateRejected>(r) ? std::get<StateRejected>(r).reason : "";
}

TEST(InventoryDocument, IsTrustedOnlyWholeAndSaysWhichKeyIsWrong) {
  const std::string port = R"({"port":1,"rate":{"width":"4x","speed":"hdr"}})";
  const auto adapter = [&](const std::string& guid, const std::string& missing,
                           const std::string& ports) {
    return R"({"node_guid":")" + guid +
           R"(","name":"mlx5_0","joined":"2026-11-22T01:00:00.000000Z","last_seen":"2026-11-22T02:00:00.000000Z","missing_since":")" +
           missing + R"(","ports":[)" + ports + "]}";
  };
  const auto doc = [](const std::string& adapters, int version = 1) {
    return R"({"version":)" + std::to_string(version) +
           R"(,"saved_at":"2026-11-22T03:00:00.000000Z","adapters":[)" + adapters + "]}";
  };
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "", port))), "");
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "2026-11-22T02:30:00.000000Z", port))), "");
  EXPECT_EQ(rejected(doc("", 2)),
            "written by a newer rdma-eventd (inventory version 2; this one reads version 1)");
  EXPECT_EQ(rejected(doc(adapter("0000:0000:0000:0000", "", port))),
            "corrupt: adapters[0].node_guid: not a node GUID");
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "yesterday", port))),
            "corrupt: adapters[0].missing_since: not an RFC 3339 time");
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "", ""))), "corrupt: adapters[0].ports: empty");
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "", port + "," + port))),
            "corrupt: adapters[0].ports[1].port: ports not in increasing order");
  EXPECT_EQ(rejected(doc(adapter(kGuid0, "", port) + "," + adapter(kGuid0, "", port))),
            "corrupt: adapters[1].node_guid: adapters not in increasing order of node GUID, or "
            "one listed twice");
  EXPECT_NE(rejected(R"({"version":1,"adapters":[]})"), "");
  EXPECT_NE(rejected("{\"version\":1,"), "");
}

// The model's side.
class InventoriedHealthTest : public PortHealthTest {
 protected:
  void inventory(PortHealthModel::InventoryPorts ports, Transitions* out = nullptr) {
    Transitions t;
    model_.set_inventory(std::move(ports), now(), t);
    if (out) *out = t;
  }
  Transitions observe(const std::string& device, const std::string& guid, PortInfo info) {
    Transitions out;
    model_.observe_port(device, guid, info, now(), out);
    return out;
  }
};

TEST_F(InventoriedHealthTest, APortOfTheInventoryDownSinceTheBootIsDownAndCountedNotNeverUp) {
  at(0);
  inventory({{kGuid0, 1}});
  Transitions t = observe("mlx5_0", kGuid0, port(1, PortState::kDown));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].health, PortHealth::kDown);
  EXPECT_EQ(t[0].reason, HealthReason::kLinkDown);
  EXPECT_TRUE(model_.verdict("mlx5_0", 1, now())->counted);
  // Another adapter's port, never up and not in the inventory, is not in service.
  t = observe("mlx5_1", kGuid1, port(1, PortState::kDown));
  EXPECT_EQ(t.at(0).reason, HealthReason::kNeverUp);
  EXPECT_EQ(model_.host_verdict().not_counted, 1u);
  // Once it joins, it is judged again: in service, down (the same verdict for another reason:
  // no transition).
  inventory({{kGuid0, 1}, {kGuid1, 1}}, &t);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(model_.verdict("mlx5_1", 1, now())->reason, HealthReason::kLinkDown);
  EXPECT_TRUE(model_.verdict("mlx5_1", 1, now())->counted);
  EXPECT_EQ(model_.host_verdict().not_counted, 0u);
}

TEST_F(InventoriedHealthTest, AnAbsentAdapterIsMissingUnderTheNameItHadOrItsGuidWhenTaken) {
  at(0);
  // After a reboot that renumbered: the healthy card (kGuid1) is mlx5_0 now, the dead one
  // (kGuid0, mlx5_0 before) did not probe.
  inventory({{kGuid0, 1}, {kGuid1, 1}});
  observe("mlx5_0", kGuid1, port(1, PortState::kActive));
  Transitions t;
  model_.add_missing("mlx5_0", kGuid0, {1}, kWallBase + 5, now(), t);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].device, kGuid0);  // its name is taken
  EXPECT_EQ(t[0].node_guid, kGuid0);
  EXPECT_EQ(t[0].health, PortHealth::kGone);
  EXPECT_EQ(t[0].reason, HealthReason::kDeviceMissing);
  EXPECT_EQ(t[0].time.wall_us, kWallBase + 5);  // since it was found missing
  HostVerdict host = model_.host_verdict();
  EXPECT_EQ(host.worst, PortHealth::kGone);
  EXPECT_EQ(host.counted[static_cast<size_t>(PortHealth::kHealthy)], 1u);
  EXPECT_EQ(host.counted[static_cast<size_t>(PortHealth::kGone)], 1u);
  // Under a free name, the name it had.
  model_.add_missing("mlx5_7", "0c42:a103:0000:0007", {1, 2}, kWallBase, now(), t);
  EXPECT_TRUE(model_.verdict("mlx5_7", 2, now()).has_value());
  // Known to the model already (gone since a restart on the same boot): nothing more.
  t.clear();
  model_.add_missing("mlx5_0", kGuid1, {1}, kWallBase, now(), t);
  EXPECT_TRUE(t.empty());
}

TEST_F(InventoriedHealthTest, AGoneAdapterOfTheInventoryIsNeverForgottenUntilRetired) {
  at(0);
  inventory({{kGuid0, 1}});
  up(1);
  feed(record(EventKind::kDeviceRemoved, "mlx5_0", kGuid0));
  ASSERT_EQ(health_of(1), PortHealth::kGone);
  EXPECT_FALSE(model_.next_deadline().has_value());  // no forgetting to wait for
  at(10 * 3600);
  advance();
  EXPECT_EQ(health_of(1), PortHealth::kGone);
  // Another card takes its name: the gone one moves to its GUID, still missing.
  feed(record(EventKind::kDeviceAdded, "mlx5_0", kGuid1));
  EXPECT_EQ(model_.verdict(kGuid0, 1, now())->health, PortHealth::kGone);
  // Retired: forgotten, and out of the inventory.
  EXPECT_EQ(model_.forget_gone_device(kGuid0), kGuid0);
  inventory({});
  EXPECT_TRUE(model_.verdicts(now()).empty());
  EXPECT_EQ(model_.forget_gone_device(kGuid0), "");
}

TEST_F(InventoriedHealthTest, AMissingAdapterBackUnderAnotherNameTakesItsPortsBack) {
  at(0);
  inventory({{kGuid0, 1}});
  Transitions t;
  model_.add_missing("mlx5_0", kGuid0, {1}, kWallBase, now(), t);
  at(5);
  feed(record(EventKind::kDeviceAdded, "mlx5_4", kGuid0));
  t = feed(port_record(EventKind::kPortState, "mlx5_4", port(1, PortState::kActive), kGuid0));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].device, "mlx5_4");
  EXPECT_EQ(t[0].previous, PortHealth::kGone);
  EXPECT_EQ(t[0].health, PortHealth::kHealthy);
  EXPECT_EQ(t[0].reason, HealthReason::kDeviceAdded);
  EXPECT_FALSE(model_.verdict("mlx5_0", 1, now()).has_value());
}

}  // namespace
}  // namespace rdma_eventd::daemon
