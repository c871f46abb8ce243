#include "config/account_ids.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

// No real entry comes near it; the bound keeps a broken NSS module from taking all memory.
constexpr size_t kMaxNssBuffer = size_t{64} << 20;

// getpwnam_r or getgrnam_r for `name`: 0 or the error number; `id` set when there is an entry.
template <typename Entry, typename Id>
int find_id(int (*lookup)(const char*, Entry*, char*, size_t, Entry**), Id Entry::*id_of,
            size_t buffer_size, const std::string& name, std::optional<uint32_t>& id) {
  return with_nss_buffer(buffer_size, [&](char* buf, size_t size) {
    Entry entry{};
    Entry* found = nullptr;
    const int rc = lookup(name.c_str(), &entry, buf, size, &found);
    if (found) id = found->*id_of;
    return rc;
  });
}

}  // namespace

size_t nss_buffer_size(Account kind) {
  const long hint = ::sysconf(kind == Account::kUser ? _SC_GETPW_R_SIZE_MAX : _SC_GETGR_R_SIZE_MAX);
  return hint > 0 ? static_cast<size_t>(hint) : 1024;
}

int with_nss_buffer(size_t initial_size,
                    const std::function<int(char* buffer, size_t size)>& lookup) {
  std::vector<char> buf(initial_size > 0 ? initial_size : 1024);
  for (;;) {
    const int rc = lookup(buf.data(), buf.size());
    if (rc != ERANGE || buf.size() >= kMaxNssBuffer) return rc;
    buf.resize(buf.size() * 2);
  }
}

uint32_t account_id(Account kind, const std::string& name) {
  std::optional<uint32_t> id;
  const size_t buffer_size = nss_buffer_size(kind);
  const int rc = kind == Account::kUser
                     ? find_id(::getpwnam_r, &passwd::pw_uid, buffer_size, name, id)
                     : find_id(::getgrnam_r, &group::gr_gid, buffer_size, name, id);
  const std::string what = kind == Account::kUser ? "user" : "group";
  if (rc != 0) {
    throw std::runtime_error("cannot look up " + what + " '" + name + "': " + std::strerror(rc));
  }
  if (!id) throw std::runtime_error("no " + what + " named '" + name + "'");
  return *id;
}

std::optional<PasswdEntry> passwd_entry(uid_t uid) {
  std::optional<PasswdEntry> entry;
  with_nss_buffer(nss_buffer_size(Account::kUser), [&](char* buf, size_t size) {
    passwd pw{};
    passwd* p = nullptr;
    const int r = ::getpwuid_r(uid, &pw, buf, size, &p);
    if (p) entry = PasswdEntry{p->pw_name, p->pw_gid};
    return r;
  });
  return entry;
}

}  // namespace rdma_eventd::daemon
