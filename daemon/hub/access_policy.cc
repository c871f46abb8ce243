#include "hub/access_policy.h"

#include <grp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "config/account_ids.h"
#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon {
namespace {

bool listed(const std::vector<uint32_t>& ids, uint32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::vector<gid_t> passwd_groups(uid_t uid) {
  const std::optional<PasswdEntry> pw = passwd_entry(uid);
  if (!pw) return {};
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (::getgrouplist(pw->name.c_str(), pw->gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));  // n now says how many there are
    if (::getgrouplist(pw->name.c_str(), pw->gid, groups.data(), &n) < 0) return {};
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

}  // namespace

Peer peer_of(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return Peer{};
  return Peer{cred.pid, cred.uid, cred.gid};
}

std::vector<gid_t> peer_groups(int fd, const Peer& peer) {
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 2; ++attempt) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return groups;
    }
    if (errno != ERANGE) break;
    groups.resize(len / sizeof(gid_t));  // the kernel said how much room it needs
  }
  return passwd_groups(peer.uid);
}

std::string process_name(pid_t pid) {
  // TASK_COMM_LEN is 16, newline included.
  internal::SmallFile comm =
      internal::read_small_file("/proc/" + std::to_string(pid) + "/comm", 64);
  std::string& name = comm.text;
  while (!name.empty() && name.back() == '\n')
    name.pop_back();
  return name.empty() ? "?" : name;
}

std::optional<std::string> access_refusal(const SocketConfig& config, const Peer& peer,
                                          const std::function<std::vector<gid_t>()>& groups) {
  if (config.allow_users.empty() && config.allow_groups.empty()) return std::nullopt;
  if (peer.uid == 0 || listed(config.allow_users, peer.uid)) return std::nullopt;
  if (!config.allow_groups.empty()) {
    if (listed(config.allow_groups, peer.gid)) return std::nullopt;
    for (gid_t g : groups()) {
      if (listed(config.allow_groups, g)) return std::nullopt;
    }
  }
  return "access denied: uid " + std::to_string(peer.uid) + " (gid " + std::to_string(peer.gid) +
         ") is not in socket.allow_users and in none of socket.allow_groups";
}

}  // namespace rdma_eventd::daemon
