// User and group lookups through NSS, with entries larger than the C library's suggested
// buffer (sysconf's 1 KiB): a group of thousands of members, a user with a long GECOS field.
#include "config/account_ids.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {
namespace {

using internal::UniqueFd;

TEST(NssBuffer, GrowsOnErangeUntilTheEntryFits) {
  // Given a lookup whose entry needs 10,000 bytes, the buffer doubles from its first size until
  // it fits, and the lookup's answer comes back.
  std::vector<size_t> sizes;
  const int rc = with_nss_buffer(1024, [&](char*, size_t size) {
    sizes.push_back(size);
    return size < 10000 ? ERANGE : 0;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(sizes, (std::vector<size_t>{1024, 2048, 4096, 8192, 16384}));
}

TEST(NssBuffer, OtherErrorsComeBackAtOnceAndGrowthIsBounded) {
  int calls = 0;
  EXPECT_EQ(with_nss_buffer(1024,
                            [&](char*, size_t) {
                              ++calls;
                              return EIO;
                            }),
            EIO);
  EXPECT_EQ(calls, 1);
  size_t last = 0;
  EXPECT_EQ(with_nss_buffer(1024,
                            [&](char*, size_t size) {
                              last = size;
                              return ERANGE;
                            }),
            ERANGE);
  EXPECT_EQ(last, size_t{64} << 20);
}

// Runs `lookups` in a child process whose /etc/passwd and /etc/group are `passwd` and `group`
// (bind mounts in a private mount namespace: the host's accounts are never touched), and
// returns what it wrote, or why it could not.
std::string in_private_accounts(const std::string& passwd, const std::string& group,
                                const std::function<std::string()>& lookups) {
  char dir_template[] = "/tmp/rdma-nss-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (!dir) return std::string("mkdtemp: ") + std::strerror(errno);
  const std::string passwd_file = std::string(dir) + "/passwd";
  const std::string group_file = std::string(dir) + "/group";
  std::ofstream(passwd_file) << passwd;
  std::ofstream(group_file) << group;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  const pid_t child = ::fork();
  if (child == 0) {
    read_end.reset();
    std::string out;
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount(passwd_file.c_str(), "/etc/passwd", nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(group_file.c_str(), "/etc/group", nullptr, MS_BIND, nullptr) != 0) {
      out = std::string("mount namespace: ") + std::strerror(errno);
    } else {
      try {
        out = lookups();
      } catch (const std::exception& e) {
        out = std::string("threw: ") + e.what();
      }
    }
    (void)!::write(write_end.get(), out.data(), out.size());
    ::_exit(0);
  }
  write_end.reset();
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  int status = 0;
  ::waitpid(child, &status, 0);
  ::unlink(passwd_file.c_str());
  ::unlink(group_file.c_str());
  ::rmdir(dir);
  return child < 0 ? "fork failed" : out;
}

TEST(AccountIds, AGroupOfThousandsOfMembersAndAUserWithALongEntryResolve) {
  // A group of 5,000 members takes some 65 KiB in a group entry, a GECOS field of 20,000
  // characters as much in a passwd entry: far past the 1 KiB the C library suggests (and the
  // 16 KiB a fixed buffer used to hold, which failed with "Numerical result out of range").
  ASSERT_EQ(::geteuid(), 0u) << "the unit tests run as root (a private mount namespace)";
  ASSERT_LT(nss_buffer_size(Account::kGroup), 65536u);
  std::string members;
  for (int i = 0; i < 5000; ++i)
    members += (i ? "," : "") + std::string("member-") + std::to_string(10000 + i);
  const std::string passwd =
      "root:x:0:0:root:/root:/bin/sh\n"
      "rdma-long:x:4711:4712:" +
      std::string(20000, 'g') + ":/nonexistent:/usr/sbin/nologin\n";
  const std::string group = "root:x:0:\nrdma-big:x:4712:" + members + "\n";
  const std::string seen = in_private_accounts(passwd, group, [] {
    const std::optional<PasswdEntry> entry = passwd_entry(4711);
    return std::to_string(account_id(Account::kGroup, "rdma-big")) + " " +
           std::to_string(account_id(Account::kUser, "rdma-long")) + " " +
           (entry ? entry->name + ":" + std::to_string(entry->gid) : "no entry");
  });
  EXPECT_EQ(seen, "4712 4711 rdma-long:4712");
}

TEST(AccountIds, AMissingNameSaysSo) {
  const std::string seen =
      in_private_accounts("root:x:0:0:root:/root:/bin/sh\n", "root:x:0:\n", [] {
        try {
          account_id(Account::kGroup, "nobody-here");
        } catch (const std::runtime_error& e) {
          return std::string(e.what());
        }
        return std::string("found");
      });
  EXPECT_EQ(seen, "no group named 'nobody-here'");
}

}  // namespace
}  // namespace rdma_eventd::daemon
