// The stand-in library's shape: every symbol of the real libibverbs.so.1 in its version node,
// nothing it depends on but libc, no sanitizer runtime even in a sanitizer build.
#include <algorithm>
#include <sstream>

#include "sim_test.h"

namespace simtest {
namespace {

// "VERSION name" for each defined dynamic symbol; hidden (non-default) versions in parentheses.
std::vector<std::string> exported(const std::string& lib) {
  const rdmatest::CommandResult r = rdmatest::run_command({"objdump", "-T", lib});
  if (r.exit_code() != 0) throw rdmatest::HarnessError("objdump -T " + lib + ": " + r.err);
  std::vector<std::string> out;
  for (const std::string& line : r.out_lines()) {
    if (line.find("*UND*") != std::string::npos ||
        (line.find(" DF ") == std::string::npos && line.find(" DO ") == std::string::npos))
      continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;)
      w.push_back(s);
    if (w.size() >= 2) out.push_back(w[w.size() - 2] + " " + w.back());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Exports, EverySymbolOfTheRealLibraryInItsVersionNode) {
  const std::vector<std::string> real = exported(SYSTEM_LIBIBVERBS);
  const std::vector<std::string> ours = exported(rdmatest::standin_libdir() + "/libibverbs.so.1");
  ASSERT_GT(real.size(), 150u);
  EXPECT_EQ(ours, real);
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_1.0 ibv_read_sysfs_file"), ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_PRIVATE_34 ibv_query_gid_type"),
            ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "IBVERBS_1.6 ibv_qp_to_qp_ex"), ours.end());
  EXPECT_NE(std::find(ours.begin(), ours.end(), "(IBVERBS_1.0) ibv_get_device_list"), ours.end());
}

TEST(Exports, SonameAndOnlyLibc) {
  const rdmatest::CommandResult r =
      rdmatest::run_command({"readelf", "-d", rdmatest::standin_libdir() + "/libibverbs.so.1"});
  std::vector<std::string> needed;
  std::string soname;
  for (const std::string& line : r.out_lines()) {
    const size_t open = line.find('['), close = line.find(']');
    if (open == std::string::npos) continue;
    if (line.find("(NEEDED)") != std::string::npos)
      needed.push_back(line.substr(open + 1, close - open - 1));
    if (line.find("(SONAME)") != std::string::npos)
      soname = line.substr(open + 1, close - open - 1);
  }
  EXPECT_EQ(soname, "libibverbs.so.1");
  EXPECT_EQ(needed, std::vector<std::string>{"libc.so.6"});
  const rdmatest::CommandResult undefined = rdmatest::run_command(
      {"nm", "-D", "--undefined-only", rdmatest::standin_libdir() + "/libibverbs.so.1"});
  EXPECT_EQ(undefined.out.find("__asan"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__ubsan"), std::string::npos);
  EXPECT_EQ(undefined.out.find("__cxa_throw"), std::string::npos);
}

}  // namespace
}  // namespace simtest
