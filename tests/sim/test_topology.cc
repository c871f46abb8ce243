// Topology files: defaults per link layer, LIDs assigned like an SM, and explicit values reaching
// the verbs API unchanged.
#include <infiniband/verbs.h>

#include "sim_test.h"

namespace simtest {
namespace {

TEST(Topology, DefaultsPerLinkLayerAndLidsAssignedLikeAnSm) {
  rdmatest::TempDir tmp;
  const std::string topo = tmp.write("t.json", R"({"devices": [
      {"name": "ib_a", "node_guid": "0x0002c90300001000",
       "ports": [{}, {"lid": 1}, {"state": "down"}]},
      {"name": "eth_b", "link_layer": "ethernet",
       "ports": [{"netdev": "eth7", "mac": "02:00:00:00:00:01", "ips": ["10.7.0.1", "fd00::7"]}]}]})");
  Sim sim(topo);
  VerbsShell sh(sim);
  sh("list");
  const std::string ib = sh("open L1:ib_a")["ctx"], eth = sh("open L1:eth_b")["ctx"];
  // Port 2 took LID 1, so port 1 gets 2 and the down port 3 keeps 3 for when it comes up.
  json p1 = sh("query_port " + ib + " 1")["attr"];
  EXPECT_EQ(p1["lid"], 2);
  EXPECT_EQ(p1["sm_lid"], 1);
  EXPECT_EQ(p1["gid_tbl_len"], 8);
  EXPECT_EQ(p1["pkey_tbl_len"], 128);
  EXPECT_EQ(p1["active_speed"], 64);
  EXPECT_EQ(sh("query_port " + ib + " 2")["attr"]["lid"], 1);
  json p3 = sh("query_port " + ib + " 3")["attr"];
  EXPECT_EQ(p3["state"], IBV_PORT_DOWN);
  EXPECT_EQ(p3["phys_state"], 2);
  EXPECT_EQ(p3["lid"], 0);
  ctl_ok(sim, {"port", "up", "ib_a/3"});
  EXPECT_EQ(sh("get_event " + ib)["type"], IBV_EVENT_PORT_ACTIVE);
  EXPECT_EQ(sh("query_port " + ib + " 3")["attr"]["lid"], 3);
  // Each IB port's GID is fe80:: and its port GUID, node GUID + port - 1.
  EXPECT_EQ(sh("query_gid " + ib + " 3 0")["gid"], "fe800000000000000002c90300001002");
  EXPECT_EQ(sh("query_pkey " + ib + " 1 0")["pkey"], 0xffff);

  const json e = sh("query_port " + eth + " 1")["attr"];
  EXPECT_EQ(e["link_layer"], IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(e["gid_tbl_len"], 256);
  EXPECT_EQ(e["pkey_tbl_len"], 1);
  EXPECT_EQ(e["active_speed"], 32);
  EXPECT_EQ(e["lid"], 0);
  const json t = sh("query_gid_table " + eth + " 16");
  ASSERT_EQ(t["ret"], 6);
  const std::vector<std::pair<std::string, int>> want = {
      {"fe80::ff:fe00:1", 1}, {"fe80::ff:fe00:1", 2}, {"::ffff:10.7.0.1", 1},
      {"::ffff:10.7.0.1", 2}, {"fd00::7", 1},         {"fd00::7", 2}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(t["entries"][i]["gid_text"], want[i].first) << i;
    EXPECT_EQ(t["entries"][i]["gid_type"], want[i].second) << i;
    EXPECT_EQ(t["entries"][i]["gid_index"], i);
    EXPECT_EQ(t["entries"][i]["ndev_ifindex"], 100);  // the first synthetic ifindex
  }
}

TEST(Topology, ExplicitValuesReachTheVerbsApi) {
  rdmatest::TempDir tmp;
  const std::string topo = tmp.write("t.json", R"({"devices": [{
      "name": "hca", "fw_ver": "16.35.2000", "vendor_part_id": 4119, "num_comp_vectors": 3,
      "device_attr": {"max_qp": 1000, "atomic_cap": "none", "hca_core_clock": 78125},
      "ports": [{"lid": "0x40", "sm_lid": 5, "sm_sl": 2, "lmc": 1, "width": "1x", "speed": "edr",
                 "active_mtu": 2048, "gid_tbl_len": 4, "pkey_tbl_len": 4,
                 "pkeys": ["0x7fff", 0, "0x8005"],
                 "gids": [{"gid": "fe80::5", "index": 3}, {"gid": "fec0::1:5"}]}]}]})");
  Sim sim(topo);
  VerbsShell sh(sim);
  sh("list");
  const json c = sh("open L1:hca");
  EXPECT_EQ(c["num_comp_vectors"], 3);
  const std::string ctx = c["ctx"];
  const json a = sh("query_port " + ctx + " 1")["attr"];
  const json want = {{"lid", 64},
                     {"sm_lid", 5},
                     {"sm_sl", 2},
                     {"lmc", 1},
                     {"active_width", 1},
                     {"active_speed", 32},
                     {"active_mtu", IBV_MTU_2048}};
  EXPECT_EQ(members_of(a, want), want);
  const json d = sh("query_device " + ctx);
  EXPECT_EQ(d["fw_ver"], "16.35.2000");
  EXPECT_EQ(d["vendor_part_id"], 4119);
  EXPECT_EQ(d["max_qp"], 1000);
  EXPECT_EQ(sh("query_device_ex " + ctx)["hca_core_clock"], 78125);
  EXPECT_EQ(sh("query_pkey " + ctx + " 1 0")["pkey"], 0x7fff);
  EXPECT_EQ(sh("query_pkey " + ctx + " 1 1")["pkey"], 0);
  EXPECT_EQ(sh("query_pkey " + ctx + " 1 2")["pkey"], 0x8005);
  EXPECT_EQ(sh("query_pkey " + ctx + " 1 4")["errno_name"], "ENOENT");
  EXPECT_EQ(sh("query_gid " + ctx + " 1 3")["gid"], "fe800000000000000000000000000005");
  EXPECT_EQ(sh("query_gid " + ctx + " 1 0")["gid"], "fec00000000000000000000000010005");
  EXPECT_EQ(sh("sysfs_read L1:hca ports/1/rate")["value"], "25 Gb/sec (1X EDR)");
  const rdmatest::CommandResult show = sim.ctl({"show", "hca"});
  EXPECT_EQ(show.out.substr(0, show.out.find('\n')),
            "hca  index 0  uverbs0  node_guid 0c42:a103:0000:0000  live  1 open contexts");
}

}  // namespace
}  // namespace simtest
