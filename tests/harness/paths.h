// Where the built programs and the sources are, as CMake configured them (see CMakeLists.txt).
#pragma once

#include <string>

namespace rdmatest {

std::string source_dir();      // the repository root
std::string bin_dir();         // build*/bin: the project's programs
std::string rdma_sim_bin();    // build*/bin/rdma-sim
std::string standin_libdir();  // build*/lib/rdma-sim, holding the stand-in libibverbs.so.1
std::string bin(const std::string& name);  // bin_dir() + "/" + name
// A topology shipped in sim/topologies, e.g. topology("two-adapters").
std::string topology(const std::string& name);

}  // namespace rdmatest
