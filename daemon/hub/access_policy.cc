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

namespace {

// Whether `peer` passes the allow-lists `users` and `groups` (both empty: anyone).
bool allowed(const std::vector<uint32_t>& users, const std::vector<uint32_t>& group_ids,
             const Peer& peer, const std::function<std::vector<gid_t>()>& groups) {
  if (users.empty() && group_ids.empty()) return true;
  if (peer.uid == 0 || listed(users, peer.uid)) return true;
  if (group_ids.empty()) return false;
  if (listed(group_ids, peer.gid)) return true;
  for (gid_t g : groups()) {
    if (listed(group_ids, g)) return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> access_refusal(const SocketConfig& config, const Peer& peer,
                                          const std::function<std::vector<gid_t>()>& groups) {
  if (allowed(config.allow_users, config.allow_groups, peer, groups)) return std::nullopt;
  return "access denied: uid " + std::to_string(peer.uid) + " (gid " + std::to_string(peer.gid) +
         ") is not in socket.allow_users and in none of socket.allow_groups";
}

std::optional<std::string> report_refusal(const ReportsConfig& config, const Peer& peer,
                                          const std::function<std::vector<gid_t>()>& groups) {
  if (allowed(config.allow_users, config.allow_groups, peer, groups)) return std::nullopt;
  return "uid " + std::to_string(peer.uid) + " (gid " + std::to_string(peer.gid) +
         ") may not report: not in reports.allow_users and in none of reports.allow_groups";
}

std::string cgroup_path(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (line.starts_with("0::")) return std::string(line.substr(3));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return "";
}

std::string unit_of_cgroup(std::string_view path) {
  while (!path.empty()) {
    const size_t slash = path.rfind('/');
    const std::string_view last = path.substr(slash == std::string_view::npos ? 0 : slash + 1);
    if (last.size() > 8 && last.ends_with(".service")) return std::string(last);
    if (last.size() > 6 && last.ends_with(".scope")) return std::string(last);
    if (slash == std::string_view::npos) break;
    path = path.substr(0, slash);
  }
  return "";
}

}  // namespace rdma_eventd::daemon
