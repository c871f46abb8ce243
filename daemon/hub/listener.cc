#include "hub/listener.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "config/account_ids.h"
#include "hub/socket_path.h"
#include "hub/startup_error.h"

namespace rdma_eventd::daemon {
namespace {

sockaddr_un address_of(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    throw std::runtime_error("subscriber socket '" + path + "': a Unix socket path has 1 to " +
                             std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

gid_t group_id(const std::string& name) {
  try {
    return account_id(Account::kGroup, name);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("socket.group: ") + e.what());
  }
}

}  // namespace

UnixListener::UnixListener(const std::string& path, uint32_t mode, const std::string& group)
    : path_(path) {
  const sockaddr_un addr = address_of(path);
  const gid_t gid = group.empty() ? static_cast<gid_t>(-1) : group_id(group);
  prepare_socket_directory(path);
  clear_socket_path(path, addr);
  internal::UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!sock) fail_startup("socket", errno);
  // bind() creates the file with its final mode (0777 less the umask), so nothing is changed
  // by path afterwards: a path can be redirected, a descriptor cannot. The umask is the
  // process's; the one other thread (the journal writer) creates no files with it that matter.
  const mode_t old_umask = ::umask(~static_cast<mode_t>(mode) & 0777);
  const int bound = ::bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_err = errno;
  ::umask(old_umask);
  if (bound != 0) fail_startup("cannot bind the subscriber socket " + path, bind_err);
  try {
    // The group goes through an O_PATH descriptor of the file, checked to be a socket of this
    // process's user: in a directory that only root and this user can change (checked above),
    // that is the socket just bound, and fchownat on the descriptor cannot land elsewhere.
    const internal::UniqueFd file(::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!file) fail_startup("cannot open " + path, errno);
    struct stat st {};
    if (::fstat(file.get(), &st) != 0) fail_startup("cannot stat " + path, errno);
    if (!S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
      throw std::runtime_error(path + " changed under the daemon while it was bound; refusing it");
    }
    if (!group.empty() &&
        ::fchownat(file.get(), "", static_cast<uid_t>(-1), gid, AT_EMPTY_PATH) != 0) {
      fail_startup("cannot give " + path + " to group " + group, errno);
    }
    if (::listen(sock.get(), SOMAXCONN) != 0) fail_startup("cannot listen on " + path, errno);
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  } catch (...) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == ::geteuid()) {
      ::unlink(path.c_str());  // bound by us a moment ago
    }
    throw;
  }
  fd_ = std::move(sock);
}

UnixListener::UnixListener(internal::UniqueFd passed) : fd_(std::move(passed)), passed_(true) {
  const int fd = fd_.get();
  const std::string what =
      "the socket passed by the service manager (fd " + std::to_string(fd) + ")";
  int type = 0;
  int listening = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) fail_startup(what, errno);
  len = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0) fail_startup(what, errno);
  sockaddr_un addr{};
  len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail_startup(what, errno);
  if (addr.sun_family != AF_UNIX || type != SOCK_STREAM || !listening) {
    throw std::runtime_error(what +
                             " is not a listening Unix stream socket (ListenStream= "
                             "with a path in the .socket unit)");
  }
  // An abstract address starts with a NUL byte; it is shown as "@name", as ss(8) does.
  const size_t n =
      len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
  path_.assign(addr.sun_path, ::strnlen(addr.sun_path, n));
  if (n > 0 && addr.sun_path[0] == '\0') path_ = "@" + std::string(addr.sun_path + 1, n - 1);
  // Descriptors passed by the service manager are blocking and inheritable.
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) fail_startup(what, errno);
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) fail_startup(what, errno);
}

UnixListener::~UnixListener() {
  // The path is removed only while it is still this socket, and never the service manager's
  // (it keeps its own descriptor and the path).
  if (!fd_ || passed_) return;
  fd_.reset();
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    ::unlink(path_.c_str());
  }
}

uint64_t raise_fd_limit(uint64_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < wanted) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(wanted, rl.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
}

}  // namespace rdma_eventd::daemon
