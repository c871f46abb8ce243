// Port, device, GID and P_Key queries: rdma-core v44's values, return conventions and errnos.
#include <infiniband/verbs.h>

#include "sim_test.h"

namespace simtest {
namespace {

class Queries : public ::testing::Test {
 protected:
  Queries() : sim_(two_adapters()), sh_(sim_) {
    sh_("list");
    ib_ = sh_("open L1:mlx5_0")["ctx"];
    roce_ = sh_("open L1:mlx5_1")["ctx"];
  }
  json ib(const std::string& cmd, const std::string& args = "") {
    return sh_(cmd + " " + ib_ + " " + args);
  }
  json roce(const std::string& cmd, const std::string& args = "") {
    return sh_(cmd + " " + roce_ + " " + args);
  }

  Sim sim_;
  VerbsShell sh_;
  std::string ib_, roce_;
};

TEST_F(Queries, InfiniBandPortThroughTheInlineAndTheExportedPath) {
  const json expected = {{"state", 4},
                         {"max_mtu", 5},
                         {"active_mtu", 5},
                         {"gid_tbl_len", 8},
                         {"port_cap_flags", 0xa259e848u},
                         {"max_msg_sz", 0x40000000},
                         {"bad_pkey_cntr", 0},
                         {"qkey_viol_cntr", 0},
                         {"pkey_tbl_len", 128},
                         {"lid", 7},
                         {"sm_lid", 1},
                         {"lmc", 0},
                         {"max_vl_num", 3},
                         {"sm_sl", 0},
                         {"subnet_timeout", 18},
                         {"init_type_reply", 0},
                         {"active_width", 2},
                         {"active_speed", 64},
                         {"phys_state", 5},
                         {"link_layer", IBV_LINK_LAYER_INFINIBAND},
                         {"flags", 0},
                         {"port_cap_flags2", 0x32}};
  // verbs.h's ibv_query_port goes through vctx->query_port with the 52-byte struct...
  const json inline_path = ib("query_port", "1");
  EXPECT_EQ(inline_path["ret"], 0);
  EXPECT_EQ(inline_path["attr"], expected);
  // ...the exported symbol fills the older 48-byte struct and leaves what follows alone.
  const json exported = ib("query_port_compat", "1");
  EXPECT_EQ(exported["ret"], 0);
  json without_flags2 = expected;
  without_flags2["port_cap_flags2"] = 0xaaaa;
  EXPECT_EQ(exported["attr"], without_flags2);
  EXPECT_EQ(exported["bytes_after_48"], "aaaaaaaa");
}

TEST_F(Queries, RocePortHasNoLidOrSmAndOneDefaultPkey) {
  const json a = roce("query_port", "2")["attr"];
  const json want = {{"link_layer", IBV_LINK_LAYER_ETHERNET},
                     {"state", IBV_PORT_ACTIVE},
                     {"active_mtu", IBV_MTU_1024},
                     {"lid", 0},
                     {"sm_lid", 0},
                     {"sm_sl", 0},
                     {"lmc", 0},
                     {"pkey_tbl_len", 1},
                     {"gid_tbl_len", 256},
                     {"port_cap_flags", 0x04010000}};
  EXPECT_EQ(members_of(a, want), want);
  EXPECT_EQ(roce("query_pkey", "2 0")["pkey"], 0xffff);
  const json beyond = roce("query_pkey", "2 1");
  EXPECT_EQ(beyond["ret"], -1);
  EXPECT_EQ(beyond["errno_name"], "ENOENT");
}

TEST_F(Queries, ABadPortIsEinval) {
  for (const char* port : {"0", "2", "255"}) {
    EXPECT_EQ(ib("query_port", port)["ret"], EINVAL) << port;
    EXPECT_EQ(ib("query_port_compat", port)["ret"], EINVAL) << port;
  }
  EXPECT_EQ(roce("query_port", "3")["ret"], EINVAL);
}

TEST_F(Queries, Device) {
  const json d = ib("query_device");
  EXPECT_EQ(d, json({{"ret", 0},
                     {"errno", 0},
                     {"errno_name", ""},
                     {"fw_ver", "20.31.1014"},
                     {"node_guid", "0c42a10300f65e44"},
                     {"phys_port_cnt", 1},
                     {"vendor_id", 0x02c9},
                     {"vendor_part_id", 4123},
                     {"max_qp", 262144},
                     {"max_pkeys", 128}}));
  const json ex = roce("query_device_ex");
  EXPECT_EQ(ex["ret"], 0);
  EXPECT_EQ(ex["phys_port_cnt"], 2);
  EXPECT_EQ(ex["fw_ver"], "22.32.2004");
  EXPECT_EQ(ex["completion_timestamp_mask"], 0x7fffffffffffffffULL);
  EXPECT_EQ(ex["hca_core_clock"], 156250);
  EXPECT_EQ(roce("query_device_ex", "1")["ret"], EINVAL);  // no comp_mask bit is defined
}

TEST_F(Queries, GidZeroForAnEmptySlotAndMinusOneWithEinvalOutsideTheTable) {
  EXPECT_EQ(ib("query_gid", "1 0")["gid"], "fe800000000000000c42a10300f65e44");
  const json empty = ib("query_gid", "1 5");
  EXPECT_EQ(empty["ret"], 0);
  EXPECT_EQ(empty["gid"], std::string(32, '0'));
  for (const char* args : {"1 8", "1 -1", "2 0"}) {
    const json bad = ib("query_gid", args);
    EXPECT_EQ(bad["ret"], -1) << args;
    EXPECT_EQ(bad["errno_name"], "EINVAL") << args;
  }
  EXPECT_EQ(roce("query_gid", "1 3")["gid"], "00000000000000000000ffffc0a80a01");
}

TEST_F(Queries, GidExReturnsZeroEnodataOrEinvalAndHonoursTheEntrySize) {
  json e = roce("query_gid_ex", "2 1");
  EXPECT_EQ(e["ret"], 0);
  EXPECT_EQ(e["entry"], json({{"gid", "fe800000000000000e42a1fffe6d0b3b"},
                              {"gid_text", "fe80::e42:a1ff:fe6d:b3b"},
                              {"gid_index", 1},
                              {"port_num", 2},
                              {"gid_type", IBV_GID_TYPE_ROCE_V2},
                              {"ndev_ifindex", 5}}));
  e = ib("query_gid_ex", "1 0");
  EXPECT_EQ(e["entry"]["gid_type"], IBV_GID_TYPE_IB);
  EXPECT_EQ(e["entry"]["ndev_ifindex"], 0);
  EXPECT_EQ(ib("query_gid_ex", "1 4")["ret"], ENODATA);
  EXPECT_EQ(ib("query_gid_ex", "1 8")["ret"], EINVAL);
  EXPECT_EQ(ib("query_gid_ex", "0 0")["ret"], EINVAL);
  EXPECT_EQ(ib("query_gid_ex", "1 0 1")["ret"], EINVAL);  // flags
  // Smaller than struct ibv_gid_entry: refused, nothing written.
  e = ib("query_gid_ex", "1 0 0 16");
  EXPECT_EQ(e["ret"], EINVAL);
  EXPECT_EQ(e["bytes"], std::string(2 * 48, 'a'));
  // Larger: the entry, then zeroes up to entry_size, and the caller's bytes beyond untouched.
  e = roce("query_gid_ex", "1 3 0 40");
  EXPECT_EQ(e["ret"], 0);
  const std::string bytes = e["bytes"];
  EXPECT_EQ(bytes.substr(0, 32), "00000000000000000000ffffc0a80a01");
  EXPECT_EQ(bytes.substr(64, 16), std::string(16, '0'));
  EXPECT_EQ(bytes.substr(80), std::string(32, 'a'));
}

TEST_F(Queries, GidTypeOfEachEntryAsSysfsNamesIt) {
  EXPECT_EQ(roce("query_gid_type", "1 0")["type"], 0);  // IB/RoCE v1
  EXPECT_EQ(roce("query_gid_type", "1 1")["type"], 1);  // RoCE v2
  EXPECT_EQ(ib("query_gid_type", "1 0")["type"], 0);
  const json empty = roce("query_gid_type", "1 100");
  EXPECT_EQ(empty["ret"], 0);  // an empty slot answers v1, as rdma-core keeps it
  EXPECT_EQ(empty["type"], 0);
  EXPECT_EQ(roce("query_gid_type", "1 256")["ret"], -1);
}

TEST_F(Queries, GidTableCountsValidEntriesOrFailsWithNegativeErrno) {
  json t = roce("query_gid_table", "16");
  ASSERT_EQ(t["ret"], 8);
  const json& entries = t["entries"];
  EXPECT_EQ(entries[0]["port_num"], 1);
  EXPECT_EQ(entries[0]["gid_index"], 0);
  EXPECT_EQ(entries[0]["gid_type"], IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(entries[3]["gid_text"], "::ffff:192.168.10.1");
  EXPECT_EQ(entries[3]["gid_type"], IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(entries[3]["ndev_ifindex"], 4);
  EXPECT_EQ(entries[4]["port_num"], 2);
  EXPECT_EQ(entries[7]["gid_text"], "::ffff:192.168.20.1");
  EXPECT_EQ(entries[7]["ndev_ifindex"], 5);
  EXPECT_EQ(ib("query_gid_table", "1")["ret"], 1);
  EXPECT_EQ(roce("query_gid_table", "7")["ret"], -EINVAL);  // more entries than room
  EXPECT_EQ(roce("query_gid_table", "0")["ret"], -EINVAL);
  EXPECT_EQ(roce("query_gid_table", "16 1")["ret"], -EINVAL);    // flags
  EXPECT_EQ(roce("query_gid_table", "4096")["ret"], -EINVAL);    // more than 64 KiB of entries
  EXPECT_EQ(roce("query_gid_table", "16 0 0")["ret"], -EINVAL);  // entry_size 0
  // A smaller entry_size: min(entry_size, 32) bytes per entry at that stride.
  t = roce("query_gid_table", "8 0 16");
  ASSERT_EQ(t["ret"], 8);
  const std::string b16 = t["bytes"];
  EXPECT_EQ(b16.substr(0, 32), "fe800000000000000e42a1fffe6d0b3a");
  EXPECT_EQ(b16.substr(32, 32), "fe800000000000000e42a1fffe6d0b3a");  // entry 1 (v2), same GID
  EXPECT_EQ(b16.substr(2 * 8 * 16), std::string(32, 'a'));
  // A larger one: each entry zero-padded to the stride.
  t = roce("query_gid_table", "8 0 48");
  ASSERT_EQ(t["ret"], 8);
  const std::string b48 = t["bytes"];
  EXPECT_EQ(b48.substr(64, 32), std::string(32, '0'));
  EXPECT_EQ(b48.substr(96, 32), "fe800000000000000e42a1fffe6d0b3a");
}

TEST_F(Queries, PkeysAreReadFromSysfsInNetworkOrder) {
  json p = ib("query_pkey", "1 0");
  EXPECT_EQ(p["ret"], 0);
  EXPECT_EQ(p["pkey"], 0xffff);
  p = ib("query_pkey", "1 1");
  EXPECT_EQ(p["pkey"], 0x8001);
  EXPECT_EQ(p["raw"], "8001");                    // big-endian in memory
  EXPECT_EQ(ib("query_pkey", "1 2")["pkey"], 0);  // an empty entry of the table
  p = ib("query_pkey", "1 128");
  EXPECT_EQ(p["ret"], -1);
  EXPECT_EQ(p["errno_name"], "ENOENT");
  EXPECT_EQ(ib("get_pkey_index", "1 0x8001")["ret"], 1);
  EXPECT_EQ(ib("get_pkey_index", "1 0xffff")["ret"], 0);
  EXPECT_EQ(ib("get_pkey_index", "1 0x1234")["ret"], -1);
  EXPECT_EQ(rdmatest::read_file(sim_.dir() + "/sys/class/infiniband/mlx5_0/ports/1/pkeys/1"),
            "0x8001\n");
}

TEST_F(Queries, SysfsFilesInTheKernelsFormats) {
  const auto read = [&](const std::string& dev, const std::string& file) {
    return sh_("sysfs_read L1:" + dev + " " + file)["value"].get<std::string>();
  };
  EXPECT_EQ(read("mlx5_0", "node_guid"), "0c42:a103:00f6:5e44");
  EXPECT_EQ(read("mlx5_0", "node_type"), "1: CA");
  EXPECT_EQ(read("mlx5_0", "board_id"), "MT_0000000223");
  EXPECT_EQ(read("mlx5_0", "ports/1/rate"), "200 Gb/sec (4X HDR)");
  EXPECT_EQ(read("mlx5_0", "ports/1/link_layer"), "InfiniBand");
  EXPECT_EQ(read("mlx5_0", "ports/1/cap_mask"), "0xa259e848");
  EXPECT_EQ(read("mlx5_0", "ports/1/gids/0"), "fe80:0000:0000:0000:0c42:a103:00f6:5e44");
  EXPECT_EQ(read("mlx5_0", "ports/1/gids/1"), "0000:0000:0000:0000:0000:0000:0000:0000");
  EXPECT_EQ(read("mlx5_0", "ports/1/gid_attrs/types/0"), "IB/RoCE v1");
  EXPECT_EQ(read("mlx5_1", "ports/1/rate"), "100 Gb/sec (4X EDR)");
  EXPECT_EQ(read("mlx5_1", "ports/2/gid_attrs/ndevs/3"), "ens1f1");
  EXPECT_EQ(read("mlx5_1", "ports/2/gid_attrs/types/3"), "RoCE v2");
  EXPECT_EQ(read("mlx5_1", "ports/2/state"), "4: ACTIVE");
  EXPECT_EQ(read("mlx5_1", "ports/2/phys_state"), "5: LinkUp");
  const std::string verbs = sim_.dir() + "/sys/class/infiniband_verbs/";
  EXPECT_EQ(rdmatest::read_file(verbs + "uverbs1/ibdev"), "mlx5_1\n");
  EXPECT_EQ(rdmatest::read_file(verbs + "uverbs1/dev"), "231:193\n");
  EXPECT_EQ(rdmatest::read_file(verbs + "abi_version"), "6\n");
  // The kernel fails reads of an IB GID's netdev and of an empty slot's attributes: absent here.
  EXPECT_EQ(sh_("sysfs_read L1:mlx5_0 ports/1/gid_attrs/ndevs/0")["errno_name"], "ENOENT");
  EXPECT_EQ(sh_("sysfs_read L1:mlx5_1 ports/1/gid_attrs/types/9")["errno_name"], "ENOENT");
}

TEST_F(Queries, StringsAreRdmaCoreV44s) {
  const json s = sh_("strings");
  EXPECT_EQ(s["port_state"], json({"unknown", "no state change (NOP)", "down", "init", "armed",
                                   "active", "active defer", "unknown", "unknown"}));
  EXPECT_EQ(s["node_type"], json({"unknown", "unknown", "unknown", "InfiniBand channel adapter",
                                  "InfiniBand switch", "InfiniBand router", "iWARP NIC", "usNIC",
                                  "usNIC UDP", "unspecified", "unknown"}));
  EXPECT_EQ(s["event_type"], json({"unknown",
                                   "CQ error",
                                   "local work queue catastrophic error",
                                   "invalid request local work queue error",
                                   "local access violation work queue error",
                                   "communication established",
                                   "send queue drained",
                                   "path migrated",
                                   "path migration request error",
                                   "local catastrophic error",
                                   "port active",
                                   "port error",
                                   "LID change",
                                   "P_Key change",
                                   "SM change",
                                   "SRQ catastrophic error",
                                   "SRQ limit reached",
                                   "last WQE reached",
                                   "client reregistration",
                                   "GID table change",
                                   "WQ fatal",
                                   "unknown",
                                   "unknown"}));
  EXPECT_EQ(s["wc_status"][1], "success");
  EXPECT_EQ(s["wc_status"][6], "Work Request Flushed Error");
  EXPECT_EQ(s["wc_status"][24], "TM software rendezvous");
  EXPECT_EQ(s["wc_status"][25], "unknown");
  EXPECT_EQ(s["wc_status"][0], "unknown");
}

TEST_F(Queries, ModelledLatencyDelaysEveryQuery) {
  // 20 ms per query, five queries: at least 100 ms (a lower bound cannot fail on a slow machine).
  ctl_ok(sim_, {"set", "query-latency-us", "20000"});
  EXPECT_EQ(sim_.stats()["query_latency_us"], 20000);
  const auto start = rdmatest::Clock::now();
  ib("query_port", "1");
  ib("query_device");
  ib("query_gid", "1 0");
  roce("query_gid_ex", "1 0");
  ib("query_pkey", "1 0");
  EXPECT_GE(rdmatest::Clock::now() - start, 100ms);
  ctl_ok(sim_, {"set", "query-latency-us", "0"});
  EXPECT_EQ(ib("query_port", "1")["attr"]["lid"], 7);
}

}  // namespace
}  // namespace simtest
