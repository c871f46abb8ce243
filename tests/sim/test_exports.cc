// The stand-in library's shape: every symbol of the real libibverbs.so.1 in its version node,
// nothing it depends on but libc, no sanitizer runtime even in a sanitizer build.
#include <algorithm>

#include "sim_test.h"

namespace simtest {
namespace {

TEST(Exports, EverySymbolOfTheRealLibraryInItsVersionNode) {
  const std::vector<std::string> real = exported(SYSTEM_LIBIBVERBS);
  std::vector<std::string> ours = exported(rdmatest::standin_libdir() + "/libibverbs.so.1");
  ASSERT_GT(real.size(), 150u);
  // Besides, the private interface of the stand-in libmlx5 (common/standin_private.h).
  std::vector<std::string> private_sim;
  std::erase_if(ours, [&](const std::string& s) {
    const bool is_private = s.rfind("RDMA_SIM_PRIVATE_1 ", 0) == 0;
    if (is_private) private_sim.push_back(s);
    return is_private;
  });
  EXPECT_EQ(ours, real);
  EXPECT_EQ(
      private_sim,
      (std::vector<std::string>{
          "RDMA_SIM_PRIVATE_1 RDMA_SIM_PRIVATE_1", "RDMA_SIM_PRIVATE_1 rdma_sim_context_command",
          "RDMA_SIM_PRIVATE_1 rdma_sim_context_uid", "RDMA_SIM_PRIVATE_1 rdma_sim_device",
          "RDMA_SIM_PRIVATE_1 rdma_sim_devx_caps", "RDMA_SIM_PRIVATE_1 rdma_sim_model_latency",
          "RDMA_SIM_PRIVATE_1 rdma_sim_open_device"}));
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_1.0 ibv_read_sysfs_file"), ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_PRIVATE_34 ibv_query_gid_type"),
            ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_1.6 ibv_qp_to_qp_ex"), ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "(IBVERBS_1.0) ibv_get_device_list"), ours.end());
}

TEST(Exports, SonameAndOnlyLibc) {
  const std::string lib = rdmatest::standin_libdir() + "/libibverbs.so.1";
  const DynamicSection d = dynamic_section(lib);
  EXPECT_EQ(d.soname, "libibverbs.so.1");
  EXPECT_EQ(d.needed, std::vector<std::string>{"libc.so.6"});
  const rdmatest::CommandResult undefined =
      rdmatest::run_command({"nm", "-D", "--undefined-only", lib});
  EXPECT_EQ(undefined.out.find("__asan"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__ubsan"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__cxa_throw"), std::string::npos);
}

}  // namespace
}  // namespace simtest
