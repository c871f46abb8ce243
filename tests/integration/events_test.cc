// Every event type, end to end: injected in the simulator, read and acked by the real daemon,
// enriched, and read back both from the daemon's record output and from a real journald.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "daemon_process.h"
#include "journal_sandbox.h"
#include "paths.h"
#include "test_support.h"

namespace rdma_eventd::test {
namespace {

using nlohmann::json;
using rdmatest::SimFabric;
using rdmatest::topology;

json gid(int index, const std::string& text, const std::string& type, const std::string& netdev) {
  return {{"index", index}, {"gid", text}, {"type", type}, {"netdev", netdev}};
}

class EventsTest : public ::testing::Test {
 protected:
  // Injects one command and returns the next record line the daemon printed for it.
  json step(const std::vector<std::string>& command) {
    inject(sim_, command);
    const std::string line = daemon_.next_record_line();
    lines_.push_back(line);
    return json::parse(line);
  }

  SimFabric sim_{topology("two-adapters")};
  DaemonProcess daemon_{sim_};
  std::vector<std::string> lines_;
};

TEST_F(EventsTest, EveryEventTypeBecomesACompleteRecordInTheJournal) {
  std::vector<json> got;
  std::vector<json> want;
  auto expect_step = [&](const std::vector<std::string>& command, json expected) {
    got.push_back(step(command));
    want.push_back(std::move(expected));
  };

  expect_step(
      {"port", "down", "mlx5_0/1"},
      port_record(
          "port_err", 10, "error", "mlx5_0", 1,
          ib_port({{"state", "down"}, {"phys_state", "polling"}, {"lid", 0}, {"sm_lid", 0}}),
          {{"state", change("active", "down")},
           {"phys_state", change("link_up", "polling")},
           {"lid", change(7, 0)},
           {"sm_lid", change(1, 0)}}));
  expect_step({"port", "up", "mlx5_0/1"},
              port_record("port_active", 9, "notice", "mlx5_0", 1, ib_port(),
                          {{"state", change("down", "active")},
                           {"phys_state", change("polling", "link_up")},
                           {"lid", change(0, 7)},
                           {"sm_lid", change(0, 1)}}));
  expect_step({"lid", "mlx5_0/1", "23"},
              port_record("lid_change", 11, "notice", "mlx5_0", 1, ib_port({{"lid", 23}}),
                          {{"lid", change(7, 23)}}));
  expect_step({"sm", "mlx5_0/1", "5", "--sl", "2"},
              port_record("sm_change", 13, "notice", "mlx5_0", 1,
                          ib_port({{"lid", 23}, {"sm_lid", 5}, {"sm_sl", 2}}),
                          {{"sm_lid", change(1, 5)}, {"sm_sl", change(0, 2)}}));
  const json ib_now = ib_port({{"lid", 23}, {"sm_lid", 5}, {"sm_sl", 2}});
  expect_step({"reregister", "mlx5_0/1"},
              port_record("client_reregister", 17, "notice", "mlx5_0", 1, ib_now, json::object()));
  json pkey_added = port_record("pkey_change", 12, "notice", "mlx5_0", 1, ib_now, json::object());
  pkey_added["pkeys_added"] = {{{"index", 2}, {"pkey", "0x8002"}}};
  pkey_added["pkeys_removed"] = json::array();
  expect_step({"pkey", "mlx5_0/1", "2", "0x8002"}, pkey_added);
  json pkey_removed = port_record("pkey_change", 12, "notice", "mlx5_0", 1, ib_now, json::object());
  pkey_removed["pkeys_added"] = json::array();
  pkey_removed["pkeys_removed"] = {{{"index", 1}, {"pkey", "0x8001"}}};
  expect_step({"pkey", "mlx5_0/1", "1", "0"}, pkey_removed);

  // A RoCE address brings two GID entries (v1 and v2), one GID_CHANGE each.
  inject(sim_, {"gid", "add-ip", "mlx5_1/2", "10.1.2.3", "--netdev", "ens1f1"});
  for (const char* type : {"roce_v1", "roce_v2"}) {
    lines_.push_back(daemon_.next_record_line());
    got.push_back(json::parse(lines_.back()));
    json r = port_record("gid_change", 18, "info", "mlx5_1", 2, roce_port(), json::object());
    r["gids_added"] = {
        gid(type == std::string("roce_v1") ? 4 : 5, "::ffff:10.1.2.3", type, "ens1f1")};
    r["gids_removed"] = json::array();
    want.push_back(r);
  }
  inject(sim_, {"gid", "del-ip", "mlx5_1/2", "10.1.2.3"});
  for (const char* type : {"roce_v1", "roce_v2"}) {
    lines_.push_back(daemon_.next_record_line());
    got.push_back(json::parse(lines_.back()));
    json r = port_record("gid_change", 18, "info", "mlx5_1", 2, roce_port(), json::object());
    r["gids_added"] = json::array();
    r["gids_removed"] = {
        gid(type == std::string("roce_v1") ? 4 : 5, "::ffff:10.1.2.3", type, "ens1f1")};
    want.push_back(r);
  }

  // DEVICE_SPEED_CHANGE, which rdma-core 44 does not name: a device event (element 0), its
  // effective speed unknown there. No port's attributes changed, so no port_state follows it.
  expect_step({"speed-change", "mlx5_0"}, speed_change_record("mlx5_0", 1));
  // A type no kernel sends yet.
  expect_step({"event", "mlx5_0/1", "21"},
              port_record("unknown", 21, "warning", "mlx5_0", 1, ib_now, json::object()));
  // An affiliated type (QP_FATAL) whose element is a pointer: decoded without touching it.
  expect_step({"event", "mlx5_0", "1", "--element", "305419896"},
              record("unknown", 1, "warning", "mlx5_0", 0));
  json fatal = record("device_fatal", 8, "critical", "mlx5_1", 0);
  json port1 = roce_port();
  port1["port"] = 1;
  json port2 = roce_port();
  port2["port"] = 2;
  fatal["ports"] = {port1, port2};
  expect_step({"fatal", "mlx5_1"}, fatal);

  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(stable_part(got[i]), want[i]) << "record " << i << ": " << got[i].dump();
    EXPECT_EQ(got[i]["seq"], i + 1) << "seq counts every record from 1, without gaps";
    EXPECT_EQ(got[i]["stream"], daemon_.stream());
    EXPECT_EQ(got[i]["time"].get<std::string>().size(), 27u);
  }

  // The journal holds the same records, one entry each, with the structured fields.
  const auto entries = daemon_.journal_entries(got.size());
  ASSERT_EQ(entries.size(), got.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const json& r = got[i];
    EXPECT_EQ(e["RDMA_RECORD"], lines_[i]) << "the journal keeps the exact JSON line";
    EXPECT_EQ(e["RDMA_EVENT"], r["event"]);
    EXPECT_EQ(e["RDMA_EVENT_TYPE"], std::to_string(r["event_type"].get<int>()));
    EXPECT_EQ(e["RDMA_DEVICE"], r["device"]);
    EXPECT_EQ(e["RDMA_PORT"], std::to_string(r["port"].get<int>()));
    EXPECT_EQ(e["RDMA_NODE_GUID"], r["node_guid"]);
    EXPECT_EQ(e["RDMA_SEQ"], std::to_string(i + 1));
    EXPECT_EQ(e["RDMA_SEVERITY"], r["severity"]);
    EXPECT_EQ(e["SYSLOG_IDENTIFIER"], "rdma-eventd");
    EXPECT_EQ(e["MESSAGE_ID"].get<std::string>().size(), 32u);
    if (r.contains("state")) {
      EXPECT_EQ(e["RDMA_PORT_STATE"], r["state"]);
      EXPECT_EQ(e["RDMA_LID"], std::to_string(r["lid"].get<int>()));
    } else {
      EXPECT_FALSE(e.contains("RDMA_PORT_STATE"));
    }
  }
  const std::map<std::string, std::string> priority = {
      {"critical", "2"}, {"error", "3"}, {"warning", "4"}, {"notice", "5"}, {"info", "6"}};
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["PRIORITY"], priority.at(got[i]["severity"])) << i;
  }
  EXPECT_EQ(entries[0]["MESSAGE"],
            "mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR");
  EXPECT_EQ(entries[1]["MESSAGE"],
            "mlx5_0 port 1: link up (DOWN -> ACTIVE), 200 Gb/s 4X HDR, LID 7");
  EXPECT_EQ(entries[7]["MESSAGE"],
            "mlx5_1 port 2: GID table changed: added ::ffff:10.1.2.3 (RoCE v1, ens1f1) at index 4");
  EXPECT_EQ(entries.back()["MESSAGE"],
            "mlx5_1: device fatal error, last known: port 1 ACTIVE 100 Gb/s 4X EDR, port 2 "
            "ACTIVE 100 Gb/s 4X EDR");

  // The documented history query finds exactly the link-down record.
  const auto history = JournalSandbox::instance().entries(
      {"RDMA_DEVICE=mlx5_0", "RDMA_EVENT=port_err", "RDMA_STREAM=" + daemon_.stream()});
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0]["RDMA_RECORD"], lines_[0]);
}

TEST_F(EventsTest, EveryEventIsReadAndAckedByTheDaemon) {
  step({"port", "down", "mlx5_0/1"});
  step({"lid", "mlx5_0/1", "9"});
  step({"fatal", "mlx5_1"});
  // After DEVICE_FATAL the daemon closes mlx5_1 (deferred: a moment after it acks the event,
  // so the wait is for the close too): every context it opened ends with everything queued to
  // it read and acked.
  const json stats = sim_.wait_stats(
      [&](const json& s) {
        auto ctx = contexts_of(s, daemon_.process().pid());
        if (ctx.size() != 2) return false;
        for (const auto& c : ctx) {
          if (c["read"] != c["queued"] || c["acked"] != c["queued"]) return false;
          if (c["device"] == "mlx5_1" && c["open"] != false) return false;
        }
        return true;
      },
      20s, "every queued event read and acked, and mlx5_1 closed");
  auto ctx = contexts_of(stats, daemon_.process().pid());
  std::map<std::string, json> by_device;
  for (const auto& c : ctx)
    by_device[c["device"]] = c;
  EXPECT_EQ(by_device["mlx5_0"]["queued"], 2);
  EXPECT_EQ(by_device["mlx5_1"]["queued"], 1);
  EXPECT_EQ(by_device["mlx5_0"]["open"], true);
  EXPECT_EQ(by_device["mlx5_1"]["open"], false) << "a device is closed after DEVICE_FATAL";
}

TEST(JournalCatalog, ExplainsARecordUnderJournalctlX) {
  JournalSandbox& journal = JournalSandbox::instance();
  journal.install_catalog(rdmatest::source_dir() + "/systemd/rdma-eventd.catalog");
  SimFabric sim(topology("two-adapters"));
  DaemonProcess daemon(sim);
  inject(sim, {"port", "down", "mlx5_0/1"});
  daemon.next_record();
  daemon.journal_entries(1);
  const std::string text =
      journal.journalctl({"-x", "RDMA_STREAM=" + daemon.stream(), "RDMA_EVENT=port_err"});
  EXPECT_NE(text.find("Subject: RDMA port mlx5_0/1 link is down"), std::string::npos) << text;
  // The entry's own fields are filled into the explanation.
  EXPECT_NE(text.find("Port 1 of RDMA device mlx5_0 (node GUID 0c42:a103:00f6:5e44) left the"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ACTIVE state (PORT_ERR); it is now down."), std::string::npos) << text;
}

}  // namespace
}  // namespace rdma_eventd::test
