// Who is on the other end of a subscriber connection, and whether the configuration lets it in
// (socket.allow_users, socket.allow_groups). The kernel vouches for the peer's credentials
// (SO_PEERCRED, SO_PEERGROUPS, taken when it connected); nothing the client sends is trusted.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace rdma_eventd::daemon {

struct Peer {
  pid_t pid = 0;
  uid_t uid = static_cast<uid_t>(-1);  // nobody's, until the kernel says
  gid_t gid = static_cast<gid_t>(-1);
};

// SO_PEERCRED of a connected Unix socket; a Peer with uid -1 when the kernel does not say
// (it always does for AF_UNIX stream sockets).
Peer peer_of(int fd);

// The peer's supplementary groups: SO_PEERGROUPS (Linux 4.13), or the groups of its uid's
// passwd entry when that fails (getgrouplist); empty when neither answers.
std::vector<gid_t> peer_groups(int fd, const Peer& peer);

// The process's name from /proc/PID/comm, for log lines only: it is the peer's to choose and
// proves nothing. "?" when it cannot be read (the process may already be gone).
std::string process_name(pid_t pid);

// Why `peer` may not connect under `config`, or nullopt when it may. Root (uid 0) is always
// let in: it owns the daemon and could change its configuration anyway. `groups` is asked only
// when the answer depends on the supplementary groups.
std::optional<std::string> access_refusal(const SocketConfig& config, const Peer& peer,
                                          const std::function<std::vector<gid_t>()>& groups);

// Why `peer` may not report application events under `config` (reports.allow_users,
// reports.allow_groups), or nullopt when it may. Both lists empty: whoever may connect may
// report; otherwise root, the listed users and members of the listed groups.
std::optional<std::string> report_refusal(const ReportsConfig& config, const Peer& peer,
                                          const std::function<std::vector<gid_t>()>& groups);

// From the text of /proc/PID/cgroup: the cgroup v2 path (the "0::" line), "" when none.
std::string cgroup_path(std::string_view proc_cgroup);
// The systemd unit a cgroup path belongs to: its last component that names a service or a
// scope ("/system.slice/job.service" -> "job.service"), "" when none does.
std::string unit_of_cgroup(std::string_view path);

}  // namespace rdma_eventd::daemon
