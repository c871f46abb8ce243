// User and group names to ids, through the system's databases (NSS: /etc/passwd, /etc/group,
// or whatever nsswitch.conf names). The configuration resolves its allow-lists with them when
// the file is read; the listener resolves socket.group when it binds; the access policy reads a
// peer's passwd entry when the kernel cannot name its groups.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace rdma_eventd::daemon {

enum class Account : uint8_t { kUser, kGroup };

// The id of the user or group called `name`. Throws std::runtime_error saying "no user named
// 'x'", or "cannot look up group 'x': <reason>" when the database could not be read.
uint32_t account_id(Account kind, const std::string& name);

// The passwd entry of `uid`: its name and primary group. nullopt when there is none or the
// database could not be read.
struct PasswdEntry {
  std::string name;
  gid_t gid = 0;
};
std::optional<PasswdEntry> passwd_entry(uid_t uid);

// Runs a reentrant NSS lookup (getpwnam_r and its kind) that fills `size` bytes of `buffer`
// and returns 0 or an error number. The buffer starts at `initial_size` bytes and doubles while
// the lookup says ERANGE (an entry that does not fit: a group of many members), up to 64 MiB.
// Returns the lookup's last result.
int with_nss_buffer(size_t initial_size,
                    const std::function<int(char* buffer, size_t size)>& lookup);

// The starting size the C library suggests for a lookup of `kind` (sysconf), or 1 KiB.
size_t nss_buffer_size(Account kind);

}  // namespace rdma_eventd::daemon
