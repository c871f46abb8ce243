// The C API from a C program: built with the project (compiled as C, linked against the
// shared library), and built again from the installed headers and library through pkg-config.
// The header-only C++ API from a C++ program that does the same, against the same library.
#include <gtest/gtest.h>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

const std::vector<std::string> kUntilReady = {
    "bad path: RDMAEV_E_CONNECT, client NULL, says why",
    "hello seq=0 stream of 32 characters",
    "unknown event: RDMAEV_E_INVAL",
    "bad port: RDMAEV_E_INVAL",
    "reply op=subscribe id=1 seq=0",
    "reply op=snapshot id=2 seq=0",
    "snapshot seq=0 mlx5_0/1 state=active",
    "ready",
};

// The program (c_api_client or cxx_api_client) follows two records from its own poll loop.
void follow_records_with(const std::string& program) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  Process client = Process::spawn({rdmatest::bin(program), d.socket(), "2"});
  for (const std::string& want : kUntilReady)
    EXPECT_EQ(client.require_next_line(10s), want);
  inject(sim, {"port", "down", "mlx5_1/1"});  // not its port
  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"port", "up", "mlx5_0/1"});
  EXPECT_EQ(client.require_next_line(10s),
            "record seq=2 port_err mlx5_0/1 state=down severity=error");
  EXPECT_EQ(client.require_next_line(10s),
            "record seq=3 port_active mlx5_0/1 state=active severity=notice");
  EXPECT_EQ(client.require_next_line(10s), "reply op=ping id=3 seq=3");
  EXPECT_EQ(client.require_next_line(10s), "nothing more: RDMAEV_E_TIMEOUT");
  EXPECT_TRUE(client.require_exit(10s).success()) << client.describe();
}

TEST(CApi, ACProgramFollowsRecordsFromItsOwnPollLoop) {
  follow_records_with("c_api_client");
}

TEST(CxxApi, ACxxProgramOnTheHeaderOnlyWrapperFollowsRecordsFromItsOwnPollLoop) {
  follow_records_with("cxx_api_client");
}

TEST(CApi, TheInstalledLibraryBuildsACProgramThroughPkgConfig) {
  rdmatest::TempDir prefix("rdma-install");
  for (const char* component : {"runtime", "devel"}) {
    const CommandResult r = run_command({RDMA_TEST_CMAKE_COMMAND, "--install", RDMA_TEST_BINARY_DIR,
                                         "--prefix", prefix.path(), "--component", component});
    ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;
  }
  const std::string libdir = prefix.file(RDMA_TEST_INSTALL_LIBDIR);
  rdmatest::SpawnOptions pc;
  pc.set["PKG_CONFIG_PATH"] = libdir + "/pkgconfig";
  const CommandResult flags =
      run_command({"pkg-config", "--define-prefix", "--cflags", "--libs", "rdma-eventd"}, pc);
  ASSERT_EQ(flags.exit_code(), 0) << flags.err;
  EXPECT_NE(flags.out.find("-I" + prefix.path() + "/include"), std::string::npos) << flags.out;
  EXPECT_NE(flags.out.find("-L" + libdir), std::string::npos) << flags.out;
  EXPECT_NE(flags.out.find("-lrdma-eventd"), std::string::npos) << flags.out;

  const std::string program = prefix.file("c_api_client");
  const std::string cmd = std::string(RDMA_TEST_C_COMPILER) + " -std=c11 -Wall -Wextra -Werror " +
                          RDMA_TEST_SANITIZE_FLAGS + " " + rdmatest::source_dir() +
                          "/tests/subscribers/c_api_client.c -o " + program + " " + flags.out;
  const CommandResult cc = run_command({"sh", "-c", cmd});
  ASSERT_EQ(cc.exit_code(), 0) << cmd << "\n" << cc.err;

  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  rdmatest::SpawnOptions run;
  run.set["LD_LIBRARY_PATH"] = libdir;  // the installed library, nothing else
  const CommandResult r = run_command({program, d.socket(), "0"}, run, 30s);
  EXPECT_EQ(r.exit_code(), 0) << r.out << r.err;
  std::vector<std::string> want = kUntilReady;
  want.push_back("reply op=ping id=3 seq=0");
  want.push_back("nothing more: RDMAEV_E_TIMEOUT");
  EXPECT_EQ(r.out_lines(), want);
}

}  // namespace
}  // namespace rdma_eventd::subtest
