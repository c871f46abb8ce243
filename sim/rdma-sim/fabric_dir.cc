// Where the fabric lives and where the stand-in library is.
#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "cli.h"
#include "common/protocol.h"

#ifndef RDMA_SIM_STANDIN_LIBDIR
#define RDMA_SIM_STANDIN_LIBDIR ""
#endif

namespace rdmasim::cli {

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string resolve_dir(const Global& g) {
  if (g.dir) return absolute_path(*g.dir);
  if (const char* env = std::getenv(kDirEnv); env && *env) return absolute_path(env);
  if (geteuid() == 0) return "/run/rdma-sim";
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  return std::string(runtime && *runtime ? runtime : "/tmp") + "/rdma-sim-" +
         std::to_string(getuid());
}

std::string standin_libdir() {
  // $RDMA_SIM_LIBDIR, then next to this program (bin/../lib/rdma-sim, the build and install
  // layout), then the build tree this program came from.
  if (const char* env = std::getenv("RDMA_SIM_LIBDIR"); env && *env) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto dir = exe.parent_path().parent_path() / "lib" / "rdma-sim";
    if (std::filesystem::exists(dir / "libibverbs.so.1", ec)) return dir.string();
  }
  return RDMA_SIM_STANDIN_LIBDIR;
}

}  // namespace rdmasim::cli
