#include "hung_fifo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace rdmasim {
namespace {

// After the write, how many more times the write end is opened for a reader that came late,
// and the pause between two: at most about 2 ms in all, and only while a reader still has the
// FIFO open.
constexpr int kLateRounds = 16;
constexpr timespec kLatePause = {0, 100'000};

// Lets go the readers of the FIFO at `fifo` (a path, or /proc/self/fd/N), who read `text`.
void release_readers(const std::string& fifo, const std::string& text) {
  for (int round = 0; round <= kLateRounds; ++round) {
    if (round > 0) nanosleep(&kLatePause, nullptr);
    // ENXIO: no reader has it open or waits for it; anything else: it is gone.
    const UniqueFd fd(open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return;
    // At most a few dozen bytes into an empty pipe: all of it goes in at once.
    if (round == 0 && write(fd.get(), text.data(), text.size()) < 0) return;
  }
}

}  // namespace

FifoRelease::~FifoRelease() {
  for (const Held& h : held_)
    release_readers(h.proc, h.text);
}

void FifoRelease::add(const std::string& path, std::string text) {
  UniqueFd fd(open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  if (access(proc.c_str(), F_OK) != 0) {
    release_readers(path, text);
    return;
  }
  held_.push_back({std::move(fd), std::move(proc), std::move(text)});
}

}  // namespace rdmasim
