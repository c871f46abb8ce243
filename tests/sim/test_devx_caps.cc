// mlx5dv_open_device and QUERY_HCA_CAP through mlx5dv_devx_general_cmd: the capability pages a
// program reads as it would from firmware, what the kernel refuses and with which errno, devices
// that refuse a DEVX context, and devices of other providers.
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <cerrno>

#include "devx_test.h"

namespace simtest {
namespace {

TEST(DevxCaps, GeneralCapabilitiesAndTheUnaffiliatedMaskAsFirmwareGivesThem) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string ib = sh.open("mlx5_0"), roce = sh.open("mlx5_1");
  const json gen = sh("caps " + ib + " 0");
  EXPECT_EQ(gen["ret"], 0) << gen;
  const json want = {{"status", 0},
                     {"event_cap", 1},
                     {"port_module_event", 1},
                     {"temp_warn_event", 1},
                     {"general_notification_event", 1},
                     {"log_max_uctx", 16},
                     {"num_ports", 1},
                     {"port_type", 0},  // InfiniBand
                     {"unwritten", 0},
                     {"set_after_fields", 0}};
  EXPECT_EQ(members_of(gen, want), want);

  const json ev = sh("caps " + ib + " 0x14");
  EXPECT_EQ(ev["ret"], 0) << ev;
  EXPECT_EQ(ev["user_unaffiliated_events"], json({0x09, 0x16, 0x17, 0x22}));
  EXPECT_EQ(ev["user_affiliated_events"], json::array());
  // The bytes: four big-endian words of affiliated events, then the unaffiliated ones, whose
  // first word is (1 << 9) | (1 << 22) | (1 << 23) | (1 << 34).
  EXPECT_EQ(ev["page_hex"], std::string(64, '0') + "0000000400c00200" + std::string(48, '0'));
  EXPECT_EQ(ev["set_after_fields"], 0);

  const json rgen = sh("caps " + roce + " 0");
  EXPECT_EQ(rgen["num_ports"], 2);
  EXPECT_EQ(rgen["port_type"], 1);  // Ethernet
  EXPECT_EQ(sh("caps " + roce + " 0x14")["user_unaffiliated_events"], json({0x09, 0x17}));
}

TEST(DevxCaps, LegacyFirmwareHasNoEventPage) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string c = sh.open("mlx5_2");
  const json gen = sh("caps " + c + " 0");
  EXPECT_EQ(gen["ret"], 0);
  EXPECT_EQ(gen["event_cap"], 0);
  const json ev = sh("caps " + c + " 0x14");
  EXPECT_EQ(ev["ret"], EREMOTEIO);
  EXPECT_EQ(ev["errno_name"], "EREMOTEIO");
  EXPECT_EQ(ev["status"], 0x03);  // BAD_PARAM
}

TEST(DevxCaps, WhatTheKernelAndFirmwareRefuse) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string c = sh.open("mlx5_0");
  json r = sh("caps " + c + " 0x99");  // a page the simulated firmware does not have
  EXPECT_EQ(r["ret"], EREMOTEIO);
  EXPECT_EQ(r["status"], 0x03);
  EXPECT_NE(r["syndrome"], 0);
  r = sh("caps " + c + " 0 64");  // an output too short for the page
  EXPECT_EQ(r["ret"], EREMOTEIO);
  EXPECT_EQ(r["status"], 0x51);             // BAD_OUTP_LEN
  r = sh("general " + c + " 0x10a 16 64");  // QUERY_ISSI: general, not modelled
  EXPECT_EQ(r["ret"], EREMOTEIO);
  EXPECT_EQ(r["status"], 0x02);             // BAD_OP
  r = sh("general " + c + " 0x500 16 64");  // CREATE_QP: not a general command
  EXPECT_EQ(r["ret"], EINVAL);
  EXPECT_EQ(r["ret_is_errno"], true);
  EXPECT_EQ(r["status"], 0);               // the output untouched
  r = sh("general " + c + " 0x100 8 64");  // shorter than a command header
  EXPECT_EQ(r["ret"], EINVAL);
  r = sh("general " + c + " 0x100 16 8");
  EXPECT_EQ(r["ret"], EINVAL);
}

TEST(DevxCaps, WithoutADevxContextOnlyWhitelistedQueriesPass) {
  // mlx5_4's firmware has two UCTX objects and the driver keeps one: one DEVX context, then
  // ibv_open_device falls back to a plain context and a DEVX open fails.
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string devx = sh.open("mlx5_4");
  const json refused = sh("open mlx5_4 devx");
  EXPECT_EQ(refused["null"], true);
  EXPECT_EQ(refused["errno_name"], "ENOMEM");
  const std::string plain = sh.open("mlx5_4", "verbs");
  json stats = sim.stats();
  EXPECT_EQ(stats["contexts"][0]["devx"], true);
  EXPECT_EQ(stats["contexts"][1]["devx"], false);
  // QUERY_HCA_CAP is whitelisted (the driver's own uid); QUERY_ISSI needs a DEVX context.
  EXPECT_EQ(sh("caps " + plain + " 0")["log_max_uctx"], 1);
  EXPECT_EQ(sh("general " + plain + " 0x10a 16 64")["ret"], EINVAL);
  EXPECT_EQ(sh("general " + devx + " 0x10a 16 64")["ret"], EREMOTEIO);
  // Closing the DEVX context gives its UCTX back.
  EXPECT_EQ(sh("close " + devx)["ret"], 0);
  sim.wait_stats([](const json& s) { return s["totals"]["contexts_open"] == 1; });
  EXPECT_EQ(sh("open mlx5_4 devx")["null"], false);
}

TEST(DevxCaps, ADeviceWithoutUctxRefusesDevxAndStillWorksForVerbs) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const json refused = sh("open mlx5_3 devx");
  EXPECT_EQ(refused["null"], true);
  EXPECT_EQ(refused["errno_name"], "EINVAL");  // mlx5_ib_devx_create(): log_max_uctx is 0
  const std::string dv = sh.open("mlx5_3", "dv"), verbs = sh.open("mlx5_3", "verbs");
  // The DEVX methods are not registered at all on such a device.
  const json caps = sh("caps " + dv + " 0");
  EXPECT_EQ(caps["ret"], EPROTONOSUPPORT);
  const json channel = sh("channel " + verbs);
  EXPECT_EQ(channel["null"], true);
  EXPECT_EQ(channel["errno_name"], "EPROTONOSUPPORT");
  // Both contexts work for verbs, async events included.
  EXPECT_EQ(sh("query_port " + dv + " 1")["state"], IBV_PORT_ACTIVE);
  ctl_ok(sim, {"port", "down", "mlx5_3/1"});
  EXPECT_EQ(sh("get_async " + dv), json({{"type", IBV_EVENT_PORT_ERR}, {"port", 1}}));
  EXPECT_EQ(sh("get_async " + verbs), json({{"type", IBV_EVENT_PORT_ERR}, {"port", 1}}));
  EXPECT_EQ(sh("query_port " + verbs + " 1")["state"], IBV_PORT_DOWN);
}

TEST(DevxCaps, DevicesOfOtherProvidersHaveNoDevx) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  for (const std::string dev : {"rxe0", "bnxt_re0", "irdma0"}) {
    for (const std::string mode : {"dv", "devx"}) {
      const json r = sh("open " + dev + " " + mode);
      EXPECT_EQ(r["null"], true) << dev;
      EXPECT_EQ(r["errno_name"], "EOPNOTSUPP") << dev;
    }
    const std::string c = sh.open(dev, "verbs");
    // libmlx5 has no DEVX operations for the context: EOPNOTSUPP, errno untouched.
    const json caps = sh("caps " + c + " 0");
    EXPECT_EQ(caps["ret"], EOPNOTSUPP) << dev;
    EXPECT_EQ(caps["errno"], 0) << dev;
    const json channel = sh("channel " + c);
    EXPECT_EQ(channel["null"], true) << dev;
    EXPECT_EQ(channel["errno_name"], "EOPNOTSUPP") << dev;
    EXPECT_EQ(sh("query_port " + c + " 1")["state"], IBV_PORT_ACTIVE) << dev;
  }
  EXPECT_EQ(sim.stats()["totals"]["contexts_open"], 3);
}

TEST(DevxCaps, OpenAttributesAreChecked) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  for (const std::string mode : {"bad_flags", "bad_comp_mask"}) {
    const json r = sh("open mlx5_0 " + mode);
    EXPECT_EQ(r["null"], true) << mode;
    EXPECT_EQ(r["errno_name"], "EINVAL") << mode;
  }
  // Without the DEVX flag rdma-core's provider still asks for a DEVX context, as
  // ibv_open_device does.
  sh.open("mlx5_0", "dv");
  sh.open("mlx5_0", "verbs");
  const json stats = sim.stats();
  EXPECT_EQ(stats["contexts"][0]["devx"], true);
  EXPECT_EQ(stats["contexts"][1]["devx"], true);
}

}  // namespace
}  // namespace simtest
