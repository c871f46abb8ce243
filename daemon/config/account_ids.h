// User and group names to ids, through the system's databases (NSS: /etc/passwd, /etc/group,
// or whatever nsswitch.conf names). The configuration resolves its allow-lists with them when
// the file is read; the listener resolves socket.group when it binds.
#pragma once

#include <cstdint>
#include <string>

namespace rdma_eventd::daemon {

enum class Account : uint8_t { kUser, kGroup };

// The id of the user or group called `name`. Throws std::runtime_error saying "no user named
// 'x'", or "cannot look up group 'x': <reason>" when the database could not be read.
uint32_t account_id(Account kind, const std::string& name);

}  // namespace rdma_eventd::daemon
