#include "namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "process.h"

namespace rdmatest {
namespace {

bool same_namespace(const char* a, const char* b) {
  struct stat sa {
  }, sb{};
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return true;  // cannot tell: assume the worst
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

[[noreturn]] void fail(const std::string& what) {
  throw HarnessError(what + ": " + std::strerror(errno));
}

bool run_is_private = false;

}  // namespace

void enter_private_network() {
  if (!same_namespace("/proc/self/ns/net", "/proc/1/ns/net")) return;
  if (unshare(CLONE_NEWNET) != 0) fail("unshare(CLONE_NEWNET)");
}

void make_run_private() {
  if (run_is_private) return;
  if (unshare(CLONE_NEWNS) != 0) fail("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("making / private");
  // A tmpfs on /run hides the host's journal socket, udev's control socket and the rest.
  if (mount("tmpfs", "/run", "tmpfs", 0, "mode=755") != 0) fail("mounting a tmpfs on /run");
  run_is_private = true;
}

void set_udev_running(bool running) {
  if (!run_is_private) {
    throw HarnessError("set_udev_running: /run is not private yet; call make_run_private() first");
  }
  if (!running) {
    if (unlink("/run/udev/control") != 0 && errno != ENOENT) fail("removing /run/udev/control");
    return;
  }
  if (mkdir("/run/udev", 0755) != 0 && errno != EEXIST) fail("creating /run/udev");
  const int fd = open("/run/udev/control", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) fail("creating /run/udev/control");
  close(fd);
}

}  // namespace rdmatest
