#include "hub/access_policy.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

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

}  // namespace
}  // namespace rdma_eventd::daemon
