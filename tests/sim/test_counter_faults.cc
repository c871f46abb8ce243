// Port counters that fail their readers (missing, empty, garbage, unreadable) and come back, and
// the counter commands and topology fields that are refused, each with what is wrong.
#include "counter_test.h"

namespace simtest {
namespace {

struct FaultCase {
  const char* mode;
  const char* reader;  // read_as_reader() of the file
  json verbs;          // ibv_read_sysfs_file() through verbs_shell: ret, value, errno_name
  bool listed;         // the name is still in the directory
};

TEST(CounterFaults, EachModeReadsAsAReaderSeesItAndOkBringsTheValueBack) {
  CounterFabric f;
  VerbsShell sh(f.sim);
  sh("list");
  const std::string file = f.port_file("mlx5_0", "counters/symbol_error");
  const FaultCase cases[] = {
      {"missing", "open: ENOENT", {{"ret", -1}, {"value", ""}, {"errno_name", "ENOENT"}}, false},
      {"empty", "", {{"ret", 0}, {"value", ""}, {"errno_name", ""}}, true},
      {"garbage",
       "N/A (no PMA)\n",
       {{"ret", 12}, {"value", "N/A (no PMA)"}, {"errno_name", ""}},
       true},
      {"unreadable", "read: EISDIR", {{"ret", -1}, {"value", ""}, {"errno_name", "EISDIR"}}, true},
  };
  uint64_t value = 12;  // from the topology
  for (const FaultCase& c : cases) {
    const json out = f.sim.ctl_json({"counter", "fail", "mlx5_0/1", "symbol_error", c.mode});
    EXPECT_EQ(out["counter"]["fault"], c.mode);
    EXPECT_EQ(read_as_reader(file), c.reader) << c.mode;
    const json verbs = sh("sysfs_read L1:mlx5_0 ports/1/counters/symbol_error");
    EXPECT_EQ(members_of(verbs, c.verbs), c.verbs) << c.mode;
    const std::vector<std::string> names = dir_names(f.port_file("mlx5_0", "counters"));
    EXPECT_EQ(std::count(names.begin(), names.end(), "symbol_error"), c.listed ? 1 : 0) << c.mode;
    EXPECT_EQ(names.size(), kExtendedPmaNames.size() - (c.listed ? 0 : 1)) << c.mode;
    EXPECT_EQ(f.sim.show()["devices"][0]["ports"][0]["counter_faults"],
              json({{"counters/symbol_error", c.mode}}))
        << c.mode;
    EXPECT_NE(ctl_ok(f.sim, {"show", "mlx5_0"})
                  .find("\n    counters/symbol_error  " + std::string(c.mode) + "\n"),
              std::string::npos)
        << c.mode;

    // The counter goes on counting behind the failing file; `ok` shows where it got to.
    const std::string added = ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "symbol_error", "3"});
    value += 3;
    EXPECT_EQ(added, "mlx5_0/1: counters/symbol_error +3 = " + std::to_string(value) +
                         "; the file stays " + c.mode +
                         " until `counter fail mlx5_0/1 counters/symbol_error ok`\n");
    EXPECT_EQ(read_as_reader(file), c.reader) << c.mode;
    EXPECT_EQ(ctl_ok(f.sim, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"}),
              "mlx5_0/1: counters/symbol_error reads " + std::to_string(value) + "\n");
    EXPECT_EQ(read_as_reader(file), std::to_string(value) + "\n") << c.mode;
    EXPECT_EQ(sh("sysfs_read L1:mlx5_0 ports/1/counters/symbol_error")["value"],
              std::to_string(value));
    EXPECT_FALSE(f.sim.show()["devices"][0]["ports"][0].contains("counter_faults")) << c.mode;
  }

  // From one fault straight to another, on a hw_counters file, and a port down counted while
  // link_downed cannot be read.
  const std::string hw = f.port_file("rxe0", "hw_counters/link_downed");
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "unreadable"});
  ctl_ok(f.sim, {"port", "down", "rxe0/1"});
  EXPECT_EQ(read_as_reader(hw), "read: EISDIR");
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "garbage"});
  EXPECT_EQ(read_as_reader(hw), "N/A (no PMA)\n");
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "missing"});
  EXPECT_EQ(read_as_reader(hw), "open: ENOENT");
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "unreadable"});
  EXPECT_EQ(read_as_reader(hw), "read: EISDIR");
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "ok"});
  EXPECT_EQ(read_as_reader(hw), "1\n");
  // No temporary is left behind by the exchanges.
  std::vector<std::string> want = kRxeHwNames;
  want.push_back("lifespan");
  EXPECT_EQ(dir_names(f.port_file("rxe0", "hw_counters")), sorted(want));
}

TEST(CounterFaults, UnknownNamesBadValuesAndModesAreRefusedAndChangeNothing) {
  CounterFabric f;
  const json before = f.sim.show();
  std::string pma, rxe;
  for (const std::string& n : kExtendedPmaNames)
    pma += (pma.empty() ? "" : ", ") + n;
  for (const std::string& n : kRxeHwNames)
    rxe += (rxe.empty() ? "" : ", ") + n;
  const std::string mlx5_hw =
      "rx_write_requests, rx_read_requests, rx_atomic_requests, rx_dct_connect, out_of_buffer, "
      "out_of_sequence, duplicate_request, rnr_nak_retry_err, packet_seq_err, "
      "implied_nak_seq_err, local_ack_timeout_err, resp_local_length_error, resp_cqe_error, "
      "req_cqe_error, req_remote_invalid_request, req_remote_access_errors, "
      "resp_remote_access_errors, resp_cqe_flush_error, req_cqe_flush_error, roce_adp_retrans, "
      "roce_adp_retrans_to, roce_slow_restart, roce_slow_restart_cnps, roce_slow_restart_trans, "
      "rp_cnp_ignored, rp_cnp_handled, np_ecn_marked_roce_packets, np_cnp_sent, "
      "rx_icrc_encapsulated";
  const std::vector<RefusedCommand> cases = {
      {{"counter", "add", "mlx5_0/1", "symbol_errors", "1"},
       1,
       "rdma-sim: mlx5_0/1 has no counter \"symbol_errors\" (counters/: " + pma +
           "; hw_counters/: " + mlx5_hw + ")\n"},
      {{"counter", "set", "rxe0/1", "symbol_error", "1"},
       1,
       "rdma-sim: rxe0/1 has no counter \"symbol_error\" (hw_counters/: " + rxe + ")\n"},
      {{"counter", "fail", "rxe0/1", "counters/link_downed", "missing"},
       1,
       "rdma-sim: rxe0/1 has no counter \"counters/link_downed\" (hw_counters/: " + rxe + ")\n"},
      {{"counter", "add", "rxe0/1", "lifespan", "1"},
       1,
       "rdma-sim: rxe0/1 has no counter \"lifespan\" (hw_counters/: " + rxe + ")\n"},
      {{"counter", "add", "bare0/1", "link_downed", "1"},
       1,
       "rdma-sim: bare0/1 has no counter \"link_downed\" (it has neither counters/ nor "
       "hw_counters/)\n"},
      {{"counter", "add", "both0/1", "link_downed", "1"},
       1,
       "rdma-sim: \"link_downed\" is in both counters/ and hw_counters/ of both0/1: say "
       "counters/link_downed or hw_counters/link_downed\n"},
      {{"counter", "set", "mlx5_0/1", "local_link_integrity_errors", "16"},
       1,
       "rdma-sim: mlx5_0/1: counters/local_link_integrity_errors is 4 bits wide: 16 is over its "
       "maximum 15\n"},
      {{"counter", "reset", "rxe0/1"}, 1, "rdma-sim: rxe0/1 has no counters/ group\n"},
      {{"counter", "add", "mlx5_0/2", "link_downed", "1"},
       1,
       "rdma-sim: device mlx5_0 has no port 2 (ports 1..1)\n"},
      {{"counter", "add", "mlx5_9/1", "link_downed", "1"}, 1, "rdma-sim: no device mlx5_9\n"},
      {{"counter", "fail", "mlx5_0/1", "link_downed", "broken"},
       2,
       "rdma-sim: counter fail: mode \"broken\" is not one of: missing, empty, garbage, "
       "unreadable, hang, ok (usage: rdma-sim counter fail DEV/PORT NAME "
       "missing|empty|garbage|unreadable|hang|ok)\n"},
      {{"counter", "add", "mlx5_0/1", "link_downed", "-1"},
       2,
       "rdma-sim: counter add: value \"-1\" is not a number (usage: rdma-sim counter add "
       "DEV/PORT NAME N)\n"},
      {{"counter", "add", "mlx5_0/1", "link_downed", "18446744073709551616"},
       2,
       "rdma-sim: counter add: value 18446744073709551616 is out of range "
       "(0..18446744073709551615) (usage: rdma-sim counter add DEV/PORT NAME N)\n"},
      {{"counter", "set", "mlx5_0/1", "link_downed"},
       2,
       "rdma-sim: counter set: wrong number of arguments (usage: rdma-sim counter set DEV/PORT "
       "NAME N)\n"},
  };
  expect_refused(f.sim, cases);
  EXPECT_EQ(f.sim.show(), before);
  EXPECT_EQ(read_as_reader(f.port_file("mlx5_0", "counters/link_downed")), "0\n");

  // Where both groups have the name, the group says which.
  ctl_ok(f.sim, {"counter", "add", "both0/1", "hw_counters/link_downed", "2"});
  EXPECT_EQ(read_as_reader(f.port_file("both0", "hw_counters/link_downed")), "2\n");
  EXPECT_EQ(read_as_reader(f.port_file("both0", "counters/link_downed")), "0\n");
}

struct BadCounterTopology {
  const char* devices;  // the "devices" array
  const char* error;    // after "rdma-sim: FILE: "
};

TEST(CounterFaults, TopologyCounterFieldsAreChecked) {
  const BadCounterTopology cases[] = {
      {R"([{"name":"a","counters":"full","ports":[{}]}])",
       "devices[0].counters: \"full\" is not one of: extended, basic, none\n"},
      {R"([{"name":"a","hw_counters":"bnxt_re","ports":[{}]}])",
       "devices[0].hw_counters: \"bnxt_re\" is not one of: mlx5, rxe, none\n"},
      {R"([{"name":"a","ports":[{"counter_values":{"link_downed":256}}]}])",
       "devices[0].ports[0].counter_values.link_downed: 256 is out of range (0..255)\n"},
      {R"([{"name":"a","counters":"basic","ports":[{"counter_values":{"port_xmit_data":"0x100000000"}}]}])",
       "devices[0].ports[0].counter_values.port_xmit_data: \"0x100000000\" is out of range "
       "(0..4294967295)\n"},
      {R"([{"name":"a","provider":"rxe","link_layer":"ethernet",
            "ports":[{"counter_values":{"symbol_error":1}}]}])",
       "devices[0].ports[0].counter_values.symbol_error: a/1 has no counter \"symbol_error\" "
       "(hw_counters/: sent_pkts, rcvd_pkts, duplicate_request, out_of_seq_request, "
       "rcvd_rnr_err, send_rnr_err, rcvd_seq_err, ack_deferred, retry_exceeded_err, "
       "retry_rnr_exceeded_err, completer_retry_err, send_err, link_downed, rdma_sends, "
       "rdma_recvs)\n"},
      {R"([{"name":"a","ports":[{"counter_values":[1]}]}])",
       "devices[0].ports[0].counter_values: expected an object, got [1]\n"},
  };
  for (const BadCounterTopology& c : cases) {
    const auto [file, r] = start_with_topology(std::string(R"({"devices":)") + c.devices + "}");
    EXPECT_EQ(r.exit_code(), 78) << c.devices;
    EXPECT_EQ(r.err, "rdma-sim: " + file + ": " + c.error) << c.devices;
    EXPECT_EQ(r.out, "") << c.devices;
  }
}

}  // namespace
}  // namespace simtest
