// The stand-in libmlx5.so.1's shape: the mlx5 direct-verbs entry points a host event daemon uses,
// each in the version node Debian 12's real library exports it from; it needs the stand-in
// libibverbs (its private node) and libc, and a program linked against the real libraries loads
// both stand-ins under the simulator.
#include "devx_test.h"

namespace simtest {
namespace {

TEST(DevxExports, EachSymbolInTheRealLibrarysVersionNode) {
  const std::vector<std::string> real = exported(SYSTEM_LIBMLX5);
  const std::vector<std::string> ours = exported(rdmatest::standin_libdir() + "/libmlx5.so.1");
  ASSERT_GT(real.size(), 100u);
  for (const std::string& s : ours)
    EXPECT_NE(std::find(real.begin(), real.end(), s), real.end())
        << s << " is not exported by " << SYSTEM_LIBMLX5 << " in that node";
  // The version nodes themselves, then the functions.
  EXPECT_EQ(ours,
            (std::vector<std::string>{
                "MLX5_1.11 MLX5_1.11", "MLX5_1.11 mlx5dv_devx_create_event_channel",
                "MLX5_1.11 mlx5dv_devx_destroy_event_channel", "MLX5_1.11 mlx5dv_devx_get_event",
                "MLX5_1.11 mlx5dv_devx_subscribe_devx_event",
                "MLX5_1.11 mlx5dv_devx_subscribe_devx_event_fd", "MLX5_1.7 MLX5_1.7",
                "MLX5_1.7 mlx5dv_devx_general_cmd", "MLX5_1.7 mlx5dv_open_device",
                "MLX5_1.8 MLX5_1.8", "MLX5_1.8 mlx5dv_is_supported"}));
}

TEST(DevxExports, SonameAndDependencies) {
  const std::string lib = rdmatest::standin_libdir() + "/libmlx5.so.1";
  const DynamicSection d = dynamic_section(lib);
  EXPECT_EQ(d.soname, "libmlx5.so.1");
  EXPECT_EQ(d.needed, (std::vector<std::string>{"libibverbs.so.1", "libc.so.6"}));
  const rdmatest::CommandResult undefined =
      rdmatest::run_command({"nm", "-D", "--undefined-only", "--with-symbol-versions", lib});
  EXPECT_NE(undefined.out.find("rdma_sim_device@RDMA_SIM_PRIVATE_1"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__asan"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__cxa_throw"), std::string::npos);
}

TEST(DevxExports, AProgramLinkedAgainstTheRealLibrariesLoadsBothStandins) {
  Sim sim(devx_variants());
  DevxShell sh(sim);
  const std::string maps =
      rdmatest::read_file("/proc/" + std::to_string(sh.process().pid()) + "/maps");
  EXPECT_NE(maps.find(rdmatest::standin_libdir() + "/libmlx5.so.1"), std::string::npos);
  EXPECT_NE(maps.find(rdmatest::standin_libdir() + "/libibverbs.so.1"), std::string::npos);
  EXPECT_EQ(maps.find(SYSTEM_LIBMLX5), std::string::npos);
  // mlx5dv_is_supported: the mlx5 provider's devices only.
  const json list = sh("list");
  std::map<std::string, bool> mlx5;
  for (const json& d : list["devices"])
    mlx5[d["name"]] = d["mlx5"];
  EXPECT_EQ(mlx5, (std::map<std::string, bool>{{"mlx5_0", true},
                                               {"mlx5_1", true},
                                               {"mlx5_2", true},
                                               {"mlx5_3", true},
                                               {"mlx5_4", true},
                                               {"rxe0", false},
                                               {"bnxt_re0", false},
                                               {"irdma0", false}}));
}

}  // namespace
}  // namespace simtest
