#include "hub/access_policy.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

SocketConfig allowing(std::vector<uint32_t> users, std::vector<uint32_t> groups) {
  SocketConfig c;
  c.allow_users = std::move(users);
  c.allow_groups = std::move(groups);
  return c;
}

// A groups callback that must not be called.
std::vector<gid_t> no_groups_needed() {
  ADD_FAILURE() << "the supplementary groups were asked for";
  return {};
}

TEST(AccessPolicy, EmptyListsLetEveryoneInWithoutLookingAtGroups) {
  EXPECT_EQ(access_refusal(SocketConfig{}, Peer{10, 1000, 1000}, no_groups_needed), std::nullopt);
}

TEST(AccessPolicy, RootAndListedUsersAreInOthersAreRefusedWithTheirUid) {
  const SocketConfig c = allowing({1000}, {});
  EXPECT_EQ(access_refusal(c, Peer{1, 0, 0}, no_groups_needed), std::nullopt);
  EXPECT_EQ(access_refusal(c, Peer{1, 1000, 5}, no_groups_needed), std::nullopt);
  EXPECT_EQ(access_refusal(c, Peer{1, 1001, 1001}, no_groups_needed),
            "access denied: uid 1001 (gid 1001) is not in socket.allow_users and in none of "
            "socket.allow_groups");
}

TEST(AccessPolicy, APrimaryOrSupplementaryGroupListedLetsThePeerIn) {
  const SocketConfig c = allowing({}, {4343});
  EXPECT_EQ(access_refusal(c, Peer{1, 2000, 4343}, no_groups_needed), std::nullopt);
  EXPECT_EQ(access_refusal(c, Peer{1, 2000, 2000},
                           [] {
                             return std::vector<gid_t>{7, 4343};
                           }),
            std::nullopt);
  EXPECT_NE(access_refusal(c, Peer{1, 2000, 2000},
                           [] {
                             return std::vector<gid_t>{7, 8};
                           }),
            std::nullopt);
  // A peer the kernel could not name is nobody in particular.
  EXPECT_NE(access_refusal(c, Peer{}, [] { return std::vector<gid_t>{}; }), std::nullopt);
}

TEST(AccessPolicy, PeerCredentialsComeFromTheKernel) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const Peer p = peer_of(sv[0]);
  EXPECT_EQ(p.pid, ::getpid());
  EXPECT_EQ(p.uid, ::geteuid());
  EXPECT_EQ(p.gid, ::getegid());
  std::vector<gid_t> mine(static_cast<size_t>(::getgroups(0, nullptr)));
  mine.resize(static_cast<size_t>(::getgroups(static_cast<int>(mine.size()), mine.data())));
  EXPECT_EQ(peer_groups(sv[0], p), mine);
  EXPECT_EQ(process_name(::getpid()), "unit_tests");
  EXPECT_EQ(process_name(0), "?");
  ::close(sv[0]);
  ::close(sv[1]);
}

// A user's groups read straight from the group database: the passwd entry's primary group and
// every group that lists the name as a member, sorted.
std::vector<gid_t> database_groups(const passwd& user) {
  std::vector<gid_t> groups{user.pw_gid};
  ::setgrent();
  while (const group* g = ::getgrent()) {
    for (char** member = g->gr_mem; *member; ++member) {
      if (std::string(*member) == user.pw_name) groups.push_back(g->gr_gid);
    }
  }
  ::endgrent();
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

TEST(AccessPolicy, WhereTheKernelCannotSayTheGroupsComeFromThePasswdEntry) {
  // SO_PEERGROUPS fails on anything but a socket, as it does on kernels before 4.13: the
  // groups are then those of the uid's passwd entry and the group database.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::vector<gid_t> root = peer_groups(pipe_fds[0], Peer{1, 0, 0});
  std::sort(root.begin(), root.end());
  const passwd* root_entry = ::getpwuid(0);
  ASSERT_NE(root_entry, nullptr);
  EXPECT_EQ(root, database_groups(*root_entry));
  // A uid with no passwd entry has no groups to offer.
  uid_t unnamed = 4242;
  while (::getpwuid(unnamed))
    ++unnamed;
  EXPECT_EQ(peer_groups(pipe_fds[0], Peer{1, unnamed, unnamed}), std::vector<gid_t>{});
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(AccessPolicy, APeerInMoreGroupsThanTheFirstGuessHasThemAll) {
  // 100 supplementary groups, more than the 64 the first SO_PEERGROUPS call has room for. The
  // peer is a child that took them (setgroups needs root: the suite runs as root).
  ASSERT_EQ(::geteuid(), 0u) << "the unit tests run as root";
  std::vector<gid_t> many;
  for (gid_t g = 0; g < 100; ++g)
    many.push_back(60000 + g);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's answer is its exit status.
    if (::setgroups(many.size(), many.data()) != 0) ::_exit(2);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) ::_exit(3);
    std::vector<gid_t> seen = peer_groups(sv[0], peer_of(sv[0]));
    ::_exit(seen == many ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: other groups seen; 2: setgroups; 3: socketpair";
}

}  // namespace
}  // namespace rdma_eventd::daemon
