#include "paths.h"

namespace rdmatest {

std::string source_dir() {
  return RDMA_TEST_SOURCE_DIR;
}
std::string bin_dir() {
  return RDMA_TEST_BIN_DIR;
}
std::string rdma_sim_bin() {
  return RDMA_TEST_RDMA_SIM_BIN;
}
std::string standin_libdir() {
  return RDMA_TEST_STANDIN_LIBDIR;
}
std::string bin(const std::string& name) {
  return bin_dir() + "/" + name;
}
std::string topology(const std::string& name) {
  return source_dir() + "/sim/topologies/" + name + ".json";
}

}  // namespace rdmatest
