// The internal helpers the daemon, the simulator and the benchmark share: one owner per
// descriptor, reading a small file whole, and replacing one whole.
#include "rdma_eventd/internal/small_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "rdma_eventd/internal/atomic_file.h"
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

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// The names in a directory, sorted, without "." and "..".
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class AtomicFile : public SmallFile {
 protected:
  std::string file() const { return std::string(dir_) + "/state.json"; }
  std::vector<std::string> names() const { return names_in(dir_); }
  static AtomicWrite how(bool sync) { return {0644, sync}; }
};

TEST_F(AtomicFile, ReplacesTheFileWholeWithItsModeWhateverTheUmask) {
  write("state.json", "old");
  const mode_t umask_was = ::umask(077);
  const std::string text(100000, 'n');  // more than one write() may take
  const int err = write_file_atomically(file(), text, how(true));
  ::umask(umask_was);
  ASSERT_EQ(err, 0);
  EXPECT_EQ(read_small_file(file(), text.size()).text, text);
  EXPECT_EQ(names(), std::vector<std::string>{"state.json"});  // no temporary file left
  struct stat st {};
  ASSERT_EQ(::stat(file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // Without the fsync: the same file.
  ASSERT_EQ(write_file_atomically(file(), "short", how(false)), 0);
  EXPECT_EQ(read_small_file(file(), 100).text, "short");
  EXPECT_EQ(names(), std::vector<std::string>{"state.json"});
}

TEST_F(AtomicFile, TheTemporaryFileIsHiddenBesideTheFileWithANameNobodyCanGuess) {
  EXPECT_EQ(atomic_temp_template(file()), std::string(dir_) + "/.state.json.XXXXXX");
  EXPECT_EQ(atomic_temp_template("rdma_eventd.prom"), ".rdma_eventd.prom.XXXXXX");
}

// A directory another user can write (a textfile directory): they plant symlinks at every name a
// writer could have used (the old fixed names, and what the template would give without its
// random part) pointing at a file of ours. The file is replaced; the link's target is neither
// truncated nor written, and the links are left as they were.
TEST_F(AtomicFile, APlantedSymlinkIsNeverFollowed) {
  const std::string victim_dir = std::string(dir_) + "/victim";
  ASSERT_EQ(::mkdir(victim_dir.c_str(), 0755), 0);
  write("victim/precious", "precious");
  const std::string target = victim_dir + "/precious";
  const std::string dangling = victim_dir + "/created-by-us";
  const std::vector<std::string> planted = {"state.json.tmp", ".state.json.tmp",
                                            ".state.json.XXXXXX"};
  for (const auto& name : planted) {
    ASSERT_EQ(::symlink(target.c_str(), (std::string(dir_) + "/" + name).c_str()), 0) << name;
  }
  ASSERT_EQ(::symlink(dangling.c_str(), (std::string(dir_) + "/.state.json.000000").c_str()), 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(write_file_atomically(file(), "new " + std::to_string(i), how(false)), 0);
  }
  EXPECT_EQ(read_small_file(file(), 100).text, "new 19");
  EXPECT_EQ(read_small_file(target, 100).text, "precious");
  EXPECT_FALSE(exists(dangling));
  for (const auto& name : planted) {
    char link[256] = {};
    ASSERT_GT(::readlink((std::string(dir_) + "/" + name).c_str(), link, sizeof link - 1), 0);
    EXPECT_EQ(std::string(link), target) << name;
  }
  EXPECT_EQ(names(),
            (std::vector<std::string>{".state.json.000000", ".state.json.XXXXXX", ".state.json.tmp",
                                      "state.json", "state.json.tmp", "victim"}));
}

// A write that fails halfway (the file size limit: EFBIG after a partial write) leaves the old
// file as it was and no temporary file.
TEST_F(AtomicFile, AWriteThatFailsHalfwayLeavesTheOldFileAndNoTemporaryFile) {
  write("state.json", "old");
  rlimit was{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &was), 0);
  const auto sigxfsz_was = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = was;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const int err = write_file_atomically(file(), std::string(10000, 'n'), how(true));
  ::setrlimit(RLIMIT_FSIZE, &was);
  ::signal(SIGXFSZ, sigxfsz_was);
  EXPECT_EQ(err, EFBIG);
  EXPECT_EQ(read_small_file(file(), 100).text, "old");
  EXPECT_EQ(names(), std::vector<std::string>{"state.json"});
}

// The rename fails (a directory is in the file's place): the temporary file is gone, and so is
// everything it held.
TEST_F(AtomicFile, ARenameThatFailsLeavesNoTemporaryFile) {
  ASSERT_EQ(::mkdir(file().c_str(), 0755), 0);
  write("state.json/inside", "x");
  EXPECT_EQ(write_file_atomically(file(), "new", how(false)), EISDIR);
  EXPECT_EQ(names(), std::vector<std::string>{"state.json"});
  EXPECT_EQ(read_small_file(file() + "/inside", 100).text, "x");
}

TEST_F(AtomicFile, SaysWhyItCouldNotStart) {
  EXPECT_EQ(write_file_atomically(std::string(dir_) + "/none/state.json", "new", how(false)),
            ENOENT);
}

}  // namespace
}  // namespace rdma_eventd::internal
