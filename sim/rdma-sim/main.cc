// rdma-sim: the simulated RDMA fabric (the simulator process) and its command line.
#include <cstdio>
#include <exception>

#include "cli.h"

int main(int argc, char** argv) {
  try {
    return rdmasim::cli::main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdma-sim: %s\n", e.what());
    return rdmasim::cli::kExitFailed;
  }
}
