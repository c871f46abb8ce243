// `counter fail ... hang`: the counter's file is a FIFO whose open() blocks a reader, as a read
// waits on a firmware that stopped answering, until the fault ends, the device goes or the
// simulator stops; then the reader reads the counter's value.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "counter_test.h"

namespace simtest {
namespace {

// What ReaderThread::outcome() gives for a reader that has not returned.
inline constexpr const char* kStillBlocked = "(still blocked)";

// A thread that reads a file as a program does (read_as_reader): open(), then read(). The file
// is held by an O_PATH descriptor, which opens neither end of a FIFO, from before the thread
// starts: where the reader is still blocked when the test ends (the simulator never let it go),
// the destructor lets it go through that descriptor, so the test fails rather than hangs.
class ReaderThread {
 public:
  explicit ReaderThread(const std::string& path)
      : held_(open(path.c_str(), O_PATH | O_CLOEXEC)), thread_([this, path] { run(path); }) {}
  ~ReaderThread() {
    const std::string fifo = "/proc/self/fd/" + std::to_string(held_);
    while (held_ >= 0 && outcome(10ms) == kStillBlocked) {
      const int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) close(fd);
    }
    thread_.join();
    if (held_ >= 0) close(held_);
  }
  ReaderThread(const ReaderThread&) = delete;
  ReaderThread& operator=(const ReaderThread&) = delete;

  // Whether the thread is waiting in its open() within `timeout`: it sleeps (state S in
  // /proc/self/task/TID/stat) in openat, glibc's open() (/proc/self/task/TID/syscall). Merely in
  // openat, it may still be looking the path up.
  bool blocked_in_open(rdmatest::Duration timeout) {
    const auto deadline = rdmatest::Clock::now() + timeout;
    std::unique_lock lock(mutex_);
    if (!changed_.wait_until(lock, deadline, [this] { return tid_ != 0; })) return false;
    const std::string task = "/proc/self/task/" + std::to_string(tid_);
    lock.unlock();
    do {
      std::ifstream syscall(task + "/syscall"), stat(task + "/stat");
      long number = -1;
      std::string line;
      if (syscall >> number && number == SYS_openat && std::getline(stat, line)) {
        // "TID (COMM) STATE ...": COMM may hold spaces and parentheses.
        const size_t end = line.rfind(") ");
        if (end != std::string::npos && line.compare(end + 2, 1, "S") == 0) return true;
      }
      std::this_thread::sleep_for(1ms);
    } while (rdmatest::Clock::now() < deadline);
    return false;
  }

  // What the reader read (read_as_reader()) if it returns within `timeout`, else kStillBlocked.
  std::string outcome(rdmatest::Duration timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [this] { return result_.has_value(); });
    return result_.value_or(kStillBlocked);
  }

 private:
  void run(const std::string& path) {
    // A signal would interrupt the open() and restart it, looking the path up again: even the
    // SIGCHLD of an rdma-sim command the test ran, ignored, comes to this thread when it arrives
    // while the thread spawning the next one has every signal blocked. They go to the others.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    {
      std::lock_guard lock(mutex_);
      tid_ = gettid();
    }
    changed_.notify_all();
    std::string text = read_as_reader(path);
    {
      std::lock_guard lock(mutex_);
      result_ = std::move(text);
    }
    changed_.notify_all();
  }

  int held_;
  std::mutex mutex_;
  std::condition_variable changed_;
  pid_t tid_ = 0;
  std::optional<std::string> result_;
  std::thread thread_;  // last: it starts once the rest is there
};

bool is_fifo(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

const std::string kHangs =
    "hangs (a FIFO: open blocks, as a read that waits on a firmware that stopped answering)";

TEST(CounterHang, AReaderBlocksInOpenUntilTheFaultEndsAndReadsTheValueItCountedTo) {
  CounterFabric f;
  const std::string file = f.port_file("mlx5_0", "counters/symbol_error");
  const json out = f.sim.ctl_json({"counter", "fail", "mlx5_0/1", "symbol_error", "hang"});
  EXPECT_EQ(out["message"], "mlx5_0/1: counters/symbol_error " + kHangs +
                                "; the file stays hung until `counter fail mlx5_0/1 "
                                "counters/symbol_error ok`");
  EXPECT_EQ(out["counter"]["fault"], "hang");
  EXPECT_EQ(out["counter"]["value"], 12);
  EXPECT_TRUE(is_fifo(file));
  EXPECT_EQ(dir_names(f.port_file("mlx5_0", "counters")), sorted(kExtendedPmaNames));
  EXPECT_EQ(f.sim.show()["devices"][0]["ports"][0]["counter_faults"],
            json({{"counters/symbol_error", "hang"}}));
  EXPECT_NE(ctl_ok(f.sim, {"show", "mlx5_0"}).find("\n    counters/symbol_error  hang\n"),
            std::string::npos);
  {
    ReaderThread reader(file);
    ASSERT_TRUE(reader.blocked_in_open(kTimeout));
    // The counter goes on counting behind the FIFO, which stays, and the reader stays blocked.
    EXPECT_EQ(ctl_ok(f.sim, {"counter", "add", "mlx5_0/1", "symbol_error", "5"}),
              "mlx5_0/1: counters/symbol_error +5 = 17; the file stays hung until `counter fail "
              "mlx5_0/1 counters/symbol_error ok`\n");
    EXPECT_TRUE(is_fifo(file));
    EXPECT_EQ(reader.outcome(100ms), kStillBlocked);
    EXPECT_TRUE(reader.blocked_in_open(0s));
    EXPECT_EQ(ctl_ok(f.sim, {"counter", "fail", "mlx5_0/1", "symbol_error", "ok"}),
              "mlx5_0/1: counters/symbol_error reads 17\n");
    EXPECT_EQ(reader.outcome(kTimeout), "17\n");
  }
  EXPECT_EQ(read_as_reader(file), "17\n");
  EXPECT_FALSE(f.sim.show()["devices"][0]["ports"][0].contains("counter_faults"));

  // Into hang from each other mode and out of it to the next one: the blocked reader reads the
  // value (set while hung), then the file is the new mode's.
  struct Step {
    const char* mode;
    const char* reader;  // read_as_reader() of the file in that mode
  };
  const Step steps[] = {{"garbage", "N/A (no PMA)\n"},
                        {"unreadable", "read: EISDIR"},
                        {"missing", "open: ENOENT"},
                        {"empty", ""},
                        {"ok", "25\n"}};
  uint64_t value = 20;
  for (const Step& s : steps) {
    ctl_ok(f.sim, {"counter", "fail", "mlx5_0/1", "symbol_error", "hang"});
    ASSERT_TRUE(is_fifo(file)) << s.mode;
    ReaderThread reader(file);
    ASSERT_TRUE(reader.blocked_in_open(kTimeout)) << s.mode;
    ctl_ok(f.sim, {"counter", "set", "mlx5_0/1", "symbol_error", std::to_string(++value)});
    EXPECT_EQ(reader.outcome(100ms), kStillBlocked) << s.mode;
    ctl_ok(f.sim, {"counter", "fail", "mlx5_0/1", "symbol_error", s.mode});
    EXPECT_EQ(reader.outcome(kTimeout), std::to_string(value) + "\n") << s.mode;
    EXPECT_EQ(read_as_reader(file), s.reader) << s.mode;
  }
  // No temporary is left behind.
  EXPECT_EQ(dir_names(f.port_file("mlx5_0", "counters")), sorted(kExtendedPmaNames));
}

TEST(CounterHang, ABlockedReaderIsLetGoWhenItsDeviceGoesOrTheSimulatorStops) {
  CounterFabric f;
  // Renamed while hung (the FIFO moves with the device's directory), then unplugged.
  ctl_ok(f.sim, {"counter", "fail", "mlx5_0/1", "symbol_error", "hang"});
  ReaderThread unplugged(f.port_file("mlx5_0", "counters/symbol_error"));
  ASSERT_TRUE(unplugged.blocked_in_open(kTimeout));
  ctl_ok(f.sim, {"rename", "mlx5_0", "mlx5_7"});
  ctl_ok(f.sim, {"counter", "add", "mlx5_7/1", "symbol_error", "1"});
  EXPECT_EQ(unplugged.outcome(100ms), kStillBlocked);
  ctl_ok(f.sim, {"unplug", "mlx5_7"});
  EXPECT_EQ(unplugged.outcome(kTimeout), "13\n");

  // hw_counters/, counted by a port down while hung, when the simulator stops.
  ctl_ok(f.sim, {"counter", "fail", "rxe0/1", "link_downed", "hang"});
  ctl_ok(f.sim, {"port", "down", "rxe0/1"});
  ReaderThread stopped(f.port_file("rxe0", "hw_counters/link_downed"));
  ASSERT_TRUE(stopped.blocked_in_open(kTimeout));
  EXPECT_EQ(stopped.outcome(100ms), kStillBlocked);
  EXPECT_TRUE(f.sim.stop().success());
  EXPECT_EQ(stopped.outcome(kTimeout), "1\n");
}

}  // namespace
}  // namespace simtest
