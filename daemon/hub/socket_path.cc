#include "hub/socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "hub/startup_error.h"
#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {
namespace {

bool trusted_owner(uid_t uid) {
  return uid == 0 || uid == ::geteuid();
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string owner_and_mode(const struct stat& st) {
  return "owner uid " + std::to_string(st.st_uid) + ", mode " + mode_text(st.st_mode);
}

// "/a/b/c" -> "/a", "/a/b", "/a/b/c".
std::vector<std::string> prefixes(const std::string& dir) {
  std::vector<std::string> out;
  for (size_t pos = dir.find('/', 1); pos != std::string::npos; pos = dir.find('/', pos + 1))
    out.push_back(dir.substr(0, pos));
  if (dir.size() > 1) out.push_back(dir);
  return out;
}

void check_directory(const std::string& dir, const struct stat& st) {
  const std::string what =
      "the subscriber socket's directory " + dir + " (" + owner_and_mode(st) + ")";
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(what + " is not a directory");
  if (!trusted_owner(st.st_uid)) {
    throw std::runtime_error(what + " belongs to another user than root or the daemon's (uid " +
                             std::to_string(::geteuid()) +
                             "): its owner could replace the socket; choose another socket.path");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
    throw std::runtime_error(what +
                             " is writable by its group or by others and not sticky: they could "
                             "replace the socket; choose another socket.path");
  }
}

// Whether something accepts connections at the path now.
bool someone_listens(const sockaddr_un& addr, const std::string& path) {
  const internal::UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) fail_startup("socket", errno);
  const int rc = ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  if (rc == 0) return true;
  if (err == ECONNREFUSED) return false;
  fail_startup("cannot tell whether " + path + " is in use", err);
}

}  // namespace

void prepare_socket_directory(const std::string& socket_path) {
  const std::string dir = socket_path.substr(0, socket_path.rfind('/'));
  struct stat st {};
  if (::lstat("/", &st) != 0) fail_startup("cannot examine /", errno);
  check_directory("/", st);
  // The path as written, from the top: each directory is checked before anything is looked up
  // or created inside it. A symbolic link is followed only when root or the daemon's user made
  // it (as /var/run -> /run): another user's link could point anywhere.
  for (const std::string& p : prefixes(dir)) {
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno != ENOENT)
        fail_startup("cannot examine the subscriber socket's directory " + p, errno);
      if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) {
        fail_startup("cannot create the subscriber socket's directory " + p, errno);
      }
      if (::lstat(p.c_str(), &st) != 0) fail_startup("cannot examine " + p, errno);
    }
    if (S_ISLNK(st.st_mode)) {
      if (!trusted_owner(st.st_uid)) {
        throw std::runtime_error("the subscriber socket's directory " + p +
                                 " is a symbolic link made by uid " + std::to_string(st.st_uid) +
                                 ", not by root or the daemon's user: not following it");
      }
      if (::stat(p.c_str(), &st) != 0) fail_startup("cannot follow " + p, errno);
    }
    check_directory(p, st);
  }
  // Where the links lead: every directory of the resolved path must be as safe.
  char real[PATH_MAX];
  if (!::realpath(dir.empty() ? "/" : dir.c_str(), real)) {
    fail_startup("cannot resolve the subscriber socket's directory " + dir, errno);
  }
  for (const std::string& p : prefixes(real)) {
    if (::lstat(p.c_str(), &st) != 0) fail_startup("cannot examine " + p, errno);
    check_directory(p, st);
  }
}

void clear_socket_path(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail_startup("cannot examine " + path, errno);
  }
  if (S_ISLNK(st.st_mode)) {
    throw std::runtime_error(path +
                             " is a symbolic link; not following it (remove it, or choose "
                             "another socket.path)");
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw std::runtime_error(path + " exists and is not a socket; not replacing it");
  }
  if (!trusted_owner(st.st_uid)) {
    throw std::runtime_error(path + " is a socket of uid " + std::to_string(st.st_uid) +
                             ", not of root or the daemon's user; not replacing it");
  }
  if (someone_listens(addr, path)) {
    throw std::runtime_error(path +
                             ": another rdma-eventd is listening there (choose another "
                             "socket with --socket or socket.path, or stop that daemon)");
  }
  if (::unlink(path.c_str()) != 0) fail_startup("cannot remove the stale socket " + path, errno);
}

}  // namespace rdma_eventd::daemon
