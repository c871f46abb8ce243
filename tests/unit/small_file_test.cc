// The internal helpers the daemon, the simulator and the benchmark share: one owner per
// descriptor, and reading a small file whole.
#include "rdma_eventd/internal/small_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::internal {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(UniqueFd, ClosesItsDescriptorOnceAndHandsItOver) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    UniqueFd a(fds[0]);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), fds[0]);
    UniqueFd c;
    c = std::move(b);
    EXPECT_TRUE(is_open(fds[0]));
  }
  EXPECT_FALSE(is_open(fds[0]));  // closed by its last owner
  UniqueFd w(fds[1]);
  const int raw = w.release();
  EXPECT_FALSE(w);
  EXPECT_TRUE(is_open(raw));  // released: no longer closed here
  w.reset(raw);
  w.reset();
  EXPECT_FALSE(is_open(raw));
}

class SmallFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(::mkdtemp(dir_), nullptr); }
  void TearDown() override { std::system(("rm -rf " + std::string(dir_)).c_str()); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = std::string(dir_) + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  char dir_[32] = "/tmp/rdma-small-XXXXXX";
};

TEST_F(SmallFile, ReadsAWholeFileUpToTheLimit) {
  const std::string text(10000, 'x');
  const auto f = read_small_file(write("f", text), 10000);
  EXPECT_TRUE(f.ok());
  EXPECT_EQ(f.text, text);
  EXPECT_TRUE(read_small_file(write("empty", ""), 0).ok());
}

TEST_F(SmallFile, RefusesALargerFileRatherThanCuttingItShort) {
  const auto f = read_small_file(write("f", std::string(10001, 'x')), 10000);
  EXPECT_FALSE(f.ok());
  EXPECT_TRUE(f.too_large);
  EXPECT_EQ(f.error, 0);
  EXPECT_EQ(f.text, "");
}

TEST_F(SmallFile, SaysWhyItCouldNotRead) {
  const auto missing = read_small_file(std::string(dir_) + "/none", 100);
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.error, ENOENT);
  const auto dir = read_small_file(dir_, 100);
  EXPECT_EQ(dir.error, EISDIR);
  EXPECT_EQ(dir.text, "");
}

}  // namespace
}  // namespace rdma_eventd::internal
