#include "config/account_ids.h"

#include <grp.h>
#include <pwd.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace rdma_eventd::daemon {

uint32_t account_id(Account kind, const std::string& name) {
  // 16 KiB holds any entry the databases return in practice (a group with hundreds of members).
  std::vector<char> buf(16384);
  int rc = 0;
  bool found = false;
  uint32_t id = 0;
  if (kind == Account::kUser) {
    passwd pw{};
    passwd* p = nullptr;
    rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &p);
    if (p) id = p->pw_uid;
    found = p != nullptr;
  } else {
    group gr{};
    group* g = nullptr;
    rc = ::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &g);
    if (g) id = g->gr_gid;
    found = g != nullptr;
  }
  const std::string what = kind == Account::kUser ? "user" : "group";
  if (rc != 0) {
    throw std::runtime_error("cannot look up " + what + " '" + name + "': " + std::strerror(rc));
  }
  if (!found) throw std::runtime_error("no " + what + " named '" + name + "'");
  return id;
}

}  // namespace rdma_eventd::daemon
