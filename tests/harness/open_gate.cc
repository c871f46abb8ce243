// rdma-open-gate: runs a command and, when a file is first opened (by that command, as the
// tests use it), holds that open until an action has run: a change made at a known point of
// another program's run, with nothing timed. The tests of rdma-eventctl history -D rotate or
// delete a journal file after the directory was listed and before that file is read this way.
//
//   rdma-open-gate FILE ACTION -- COMMAND [ARG...]
//
// fanotify's permission events (FAN_OPEN_PERM; root): whoever opens FILE waits in open(2) until
// the gate answers, and it answers once ACTION (run with sh -c) has ended. ACTION runs once, on
// the first open; it must not open FILE itself (that open would wait on the gate, which waits on
// ACTION). Later opens are let through at once. The exit status is COMMAND's (128 + the signal
// that ended it); 125 when the gate cannot be set up, ACTION fails, or FILE was never opened.
#include <fcntl.h>
#include <poll.h>
#include <sys/fanotify.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kGateFailed = 125;

int fail(const char* what) {
  std::fprintf(stderr, "rdma-open-gate: %s: %s\n", what, std::strerror(errno));
  return kGateFailed;
}

// sh -c ACTION, to its end: its exit status, or -1.
int run_action(const char* action) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", action, static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[3], "--") != 0) {
    std::fprintf(stderr, "usage: rdma-open-gate FILE ACTION -- COMMAND [ARG...]\n");
    return 2;
  }
  const char* file = argv[1];
  const char* action = argv[2];
  const int gate = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
  if (gate < 0) return fail("fanotify_init (root, and a kernel with fanotify permission events)");
  if (fanotify_mark(gate, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, file) != 0) return fail(file);

  const pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    execvp(argv[4], argv + 4);
    std::fprintf(stderr, "rdma-open-gate: %s: %s\n", argv[4], std::strerror(errno));
    _exit(127);
  }
  const int ended = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (ended < 0) return fail("pidfd_open");

  bool opened = false;
  int action_status = 0;
  for (;;) {
    pollfd fds[] = {{gate, POLLIN, 0}, {ended, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return fail("poll");
    }
    if (fds[0].revents & POLLIN) {
      alignas(fanotify_event_metadata) char buffer[4096];
      const ssize_t n = read(gate, buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return fail("read");
      }
      auto* m = reinterpret_cast<fanotify_event_metadata*>(buffer);
      for (ssize_t left = n; FAN_EVENT_OK(m, left); m = FAN_EVENT_NEXT(m, left)) {
        if (m->mask & FAN_OPEN_PERM) {
          if (!opened) {
            opened = true;
            action_status = run_action(action);
          }
          const fanotify_response allow{m->fd, FAN_ALLOW};
          if (write(gate, &allow, sizeof allow) != sizeof allow) return fail("answering an open");
        }
        if (m->fd >= 0) close(m->fd);
      }
      continue;  // the opens first: the command may wait on one
    }
    if (fds[1].revents & POLLIN) break;
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return fail("waitpid");
  if (!opened) {
    std::fprintf(stderr, "rdma-open-gate: %s was never opened\n", file);
    return kGateFailed;
  }
  if (action_status != 0) {
    std::fprintf(stderr, "rdma-open-gate: the action failed (%d): %s\n", action_status, action);
    return kGateFailed;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
