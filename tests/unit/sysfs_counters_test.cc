// The counters source (daemon/counters): reading a port's counter files as the kernel shows them,
// and every way such a file fails a reader, each named with its path and why.
#include "counters/sysfs_counters.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

// A device's directory, DIR/ports/1/counters/ and hw_counters/, with the given files.
struct PortDir {
  char root[32] = "/tmp/rdma-counters-XXXXXX";
  std::string dir;
  PortDir() : dir(::mkdtemp(root) ? root : "") {
    EXPECT_FALSE(dir.empty());
    for (const char* sub : {"/ports", "/ports/1", "/ports/1/counters", "/ports/1/hw_counters"})
      ::mkdir((dir + sub).c_str(), 0755);
  }
  ~PortDir() {
    if (!dir.empty()) std::system(("rm -rf " + dir).c_str());
  }
  PortDir(const PortDir&) = delete;
  PortDir& operator=(const PortDir&) = delete;
  void file(const std::string& rel, const std::string& text) const {
    std::ofstream(path(rel)) << text;
  }
  std::string path(const std::string& rel) const { return dir + "/ports/1/" + rel; }
};

TEST(SysfsCounters, ReadsEachCounterNamedWithItsWidth) {
  PortDir p;
  p.file("counters/symbol_error", "12\n");
  p.file("counters/link_downed", "255\n");
  p.file("hw_counters/out_of_sequence", "18446744073709551615\n");
  std::vector<CounterValue> out;
  const std::vector<std::string> names = {"symbol_error", "link_downed",
                                          "hw_counters/out_of_sequence"};
  EXPECT_FALSE(read_port_counters(p.dir, 1, names, CounterDriver::kOther, out));
  EXPECT_EQ(out, (std::vector<CounterValue>{{"symbol_error", 16, 12},
                                            {"link_downed", 8, 255},
                                            {"hw_counters/out_of_sequence", 64, UINT64_MAX}}));
  // On an mlx5 device the Q counter is its firmware's 32 bits, which wrap; counters/ are as
  // they were.
  p.file("hw_counters/out_of_sequence", "4294967295\n");
  out.clear();
  EXPECT_FALSE(read_port_counters(p.dir, 1, names, CounterDriver::kMlx5, out));
  EXPECT_EQ(out,
            (std::vector<CounterValue>{{"symbol_error", 16, 12},
                                       {"link_downed", 8, 255},
                                       {"hw_counters/out_of_sequence", 32, 4294967295, true}}));
  const CounterGroups groups = counter_groups(p.dir, 1);
  EXPECT_TRUE(groups.pma);
  EXPECT_TRUE(groups.hw);
  EXPECT_FALSE(counter_groups(p.dir, 2).pma);
}

TEST(SysfsCounters, EveryWayAFileFailsIsNamedWithItsPath) {
  PortDir p;
  p.file("counters/empty", "");
  p.file("counters/garbage", "N/A (no PMA)\n");
  p.file("counters/signed", "-1\n");
  p.file("counters/too_big", "18446744073709551616\n");
  p.file("counters/control", std::string("1\x01\n"));
  ::mkdir(p.path("counters/directory").c_str(), 0755);
  // And whether the failure may pass: only a read that failed does (the directory stands for
  // a failed firmware command, whose read fails too).
  const std::vector<std::tuple<std::string, std::string, bool>> cases = {
      {"missing", "No such file or directory", false},
      {"empty", "empty", false},
      {"garbage", "not a number: 'N/A (no PMA)'", false},
      {"signed", "not a number: '-1'", false},
      {"too_big", "not a number: '18446744073709551616'", false},
      {"control", "not a number: '1?'", false},
      {"directory", "Is a directory", true},
  };
  for (const auto& [name, reason, transient] : cases) {
    SCOPED_TRACE(name);
    std::vector<CounterValue> out;
    const auto error = read_port_counters(p.dir, 1, {name}, CounterDriver::kOther, out);
    ASSERT_TRUE(error);
    EXPECT_EQ(error->path, p.path("counters/" + name));
    EXPECT_EQ(error->reason, reason);
    EXPECT_EQ(error->transient(), transient);
    EXPECT_TRUE(out.empty());
  }
}

TEST(SysfsCounters, AFailedFirmwareCommandMayPassAndAFileThatIsNotThereOrNotOursDoesNot) {
  for (const int e : {EIO, ETIMEDOUT, EBUSY, EAGAIN, EINVAL, ENOMEM, EISDIR}) {
    EXPECT_TRUE((CounterReadError{"f", std::strerror(e), e}).transient()) << std::strerror(e);
  }
  for (const int e : {0, ENOENT, ENOTDIR, ENODEV, ENXIO, EACCES, EPERM}) {
    EXPECT_FALSE((CounterReadError{"f", "x", e}).transient()) << e;
  }
}

TEST(SysfsCounters, TheTextOfACounterIsDecimalDigitsAndAtMostANewline) {
  uint64_t v = 7;
  EXPECT_TRUE(parse_counter_text("0", v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parse_counter_text("65535\n", v));
  EXPECT_EQ(v, 65535u);
  for (const char* bad : {"", "\n", "1\n\n", " 1", "1 ", "+1", "0x10", "1e3", "12a"}) {
    v = 7;
    EXPECT_FALSE(parse_counter_text(bad, v)) << bad;
    EXPECT_EQ(v, 7u) << bad;
  }
}

}  // namespace
}  // namespace rdma_eventd::daemon
