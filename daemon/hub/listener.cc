#include "hub/listener.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

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

// mkdir -p of the socket's directory; new directories get 0755.
void make_parent_dirs(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    const std::string dir = path.substr(0, pos);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      fail("cannot create the subscriber socket's directory " + dir, errno);
    }
  }
}

// Whether something accepts connections at the path now.
bool someone_listens(const sockaddr_un& addr, const std::string& path) {
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) fail("socket", errno);
  const int rc = ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::close(probe);
  if (rc == 0) return true;
  if (err == ECONNREFUSED) return false;
  fail("cannot tell whether " + path + " is in use", err);
}

gid_t group_id(const std::string& name) {
  std::vector<char> buf(16384);
  group g{};
  group* found = nullptr;
  const int rc = ::getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found);
  if (rc != 0) fail("socket.group: cannot look up group '" + name + "'", rc);
  if (!found) throw std::runtime_error("socket.group: no group named '" + name + "'");
  return found->gr_gid;
}

}  // namespace

UnixListener::UnixListener(const std::string& path, uint32_t mode, const std::string& group)
    : path_(path) {
  const sockaddr_un addr = address_of(path);
  make_parent_dirs(path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      throw std::runtime_error(path + " exists and is not a socket; not replacing it");
    }
    if (someone_listens(addr, path)) {
      throw std::runtime_error(path +
                               ": another rdma-eventd is listening there (choose another "
                               "socket with --socket or socket.path, or stop that daemon)");
    }
    if (::unlink(path.c_str()) != 0) fail("cannot remove the stale socket " + path, errno);
  }
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail("socket", errno);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    fail("cannot bind the subscriber socket " + path, err);
  }
  try {
    if (!group.empty() && ::chown(path.c_str(), static_cast<uid_t>(-1), group_id(group)) != 0) {
      fail("cannot give " + path + " to group " + group, errno);
    }
    if (::chmod(path.c_str(), mode) != 0) fail("cannot set the mode of " + path, errno);
    if (::listen(fd_, SOMAXCONN) != 0) fail("cannot listen on " + path, errno);
    if (::stat(path.c_str(), &st) != 0) fail("cannot stat " + path, errno);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(path.c_str());  // bound by us a moment ago
    throw;
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
}

UnixListener::UnixListener(Passed passed) : fd_(passed.fd), passed_(true) {
  const std::string what =
      "the socket passed by the service manager (fd " + std::to_string(passed.fd) + ")";
  try {
    int type = 0;
    int listening = 0;
    socklen_t len = sizeof type;
    if (::getsockopt(fd_, SOL_SOCKET, SO_TYPE, &type, &len) != 0) fail(what, errno);
    len = sizeof listening;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0) fail(what, errno);
    sockaddr_un addr{};
    len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail(what, errno);
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
    const int fl = ::fcntl(fd_, F_GETFL);
    if (fl < 0 || ::fcntl(fd_, F_SETFL, fl | O_NONBLOCK) != 0) fail(what, errno);
    if (::fcntl(fd_, F_SETFD, FD_CLOEXEC) != 0) fail(what, errno);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

UnixListener::~UnixListener() {
  if (fd_ < 0) return;
  if (passed_) {
    ::close(fd_);  // the service manager keeps its own descriptor and the path
    return;
  }
  ::close(fd_);
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
