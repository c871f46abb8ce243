// The daemon's log lines on a journal stream: found as systemd says, "<N>" prefixes that
// journald reads as the priority, and never a blocked writer. A socketpair stands in for the
// stream journald holds the other end of.
#include "systemd/journal_stream_log.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

namespace rdma_eventd::daemon {
namespace {

struct Stream {
  Stream() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
  ~Stream() {
    close(fds[0]);
    close(fds[1]);
  }
  int daemon_end() const { return fds[0]; }
  // "device:inode" of the daemon's end, as systemd puts it in $JOURNAL_STREAM.
  std::string id() const {
    struct stat st {};
    EXPECT_EQ(fstat(fds[0], &st), 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  // Everything written so far (the journald end never blocks: it is non-blocking).
  std::string read_all() const {
    std::string out;
    char buf[65536];
    for (;;) {
      const ssize_t n = recv(fds[1], buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  int fds[2] = {-1, -1};
};

std::shared_ptr<spdlog::logger> logger_on(const std::shared_ptr<JournalStreamSink>& sink) {
  auto logger = std::make_shared<spdlog::logger>("test", sink);
  logger->set_level(spdlog::level::trace);
  return logger;
}

TEST(IsJournalStream, TheStreamNamedByJournalStream) {
  Stream s;
  EXPECT_TRUE(is_journal_stream(s.daemon_end(), s.id().c_str()));
}

TEST(IsJournalStream, NotWhenTheVariableNamesAnotherFileOrIsMalformed) {
  // A child of the service with its stderr redirected elsewhere inherits the variable.
  Stream s;
  Stream other;
  EXPECT_FALSE(is_journal_stream(s.daemon_end(), nullptr));
  EXPECT_FALSE(is_journal_stream(s.daemon_end(), other.id().c_str()));
  const std::string id = s.id();
  const std::string device = id.substr(0, id.find(':'));
  for (const std::string& bad :
       {std::string(), std::string(":"), device, device + ":", ":" + id.substr(id.find(':') + 1),
        id + "x", id + ":1", " " + id, device + ":-1"}) {
    EXPECT_FALSE(is_journal_stream(s.daemon_end(), bad.c_str())) << "'" << bad << "'";
  }
  EXPECT_FALSE(is_journal_stream(-1, id.c_str()));
}

TEST(JournalStreamSink, EachLevelGetsItsSyslogPriority) {
  Stream s;
  auto logger = logger_on(std::make_shared<JournalStreamSink>(s.daemon_end()));
  logger->trace("t");
  logger->debug("d");
  logger->info("ready: watching {} devices", 2);
  logger->warn("w");
  logger->error("mlx5_0: cannot open: {}", "Permission denied");
  logger->critical("c");
  EXPECT_EQ(s.read_all(),
            "<7>t\n<7>d\n<6>ready: watching 2 devices\n<4>w\n"
            "<3>mlx5_0: cannot open: Permission denied\n<2>c\n");
}

TEST(JournalStreamSink, EveryLineOfAMessageKeepsThePriority) {
  // journald reads a prefix per line: a line without one would be stored at info.
  Stream s;
  auto logger = logger_on(std::make_shared<JournalStreamSink>(s.daemon_end()));
  logger->error("first\nsecond\n");
  logger->warn("");
  EXPECT_EQ(s.read_all(), "<3>first\n<3>second\n<4>\n");
}

TEST(JournalStreamSink, AFullStreamDropsWholeLinesAndSaysSoWithoutBlocking) {
  // Given a journald that reads nothing, the sink keeps returning (if it blocked, this test
  // would hang until ctest's timeout), drops what does not fit, and once the stream is read
  // again says how many lines it dropped; no line is cut.
  Stream s;
  const int small = 4096;
  ASSERT_EQ(setsockopt(s.daemon_end(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  auto sink = std::make_shared<JournalStreamSink>(s.daemon_end());
  auto logger = logger_on(sink);
  const std::string filler(200, 'x');
  int logged = 0;
  while (sink->dropped() < 3) {
    ASSERT_LT(logged, 100000) << "the stream never filled up";
    logger->info("{} {}", logged++, filler);
  }
  const std::string before = s.read_all();
  logger->error("after");
  const std::string after = s.read_all();

  std::vector<std::string> lines;
  const std::string all = before + after;
  for (size_t at = 0; at < all.size();) {
    const size_t end = all.find('\n', at);
    ASSERT_NE(end, std::string::npos) << "a cut line at the end: " << all.substr(at);
    lines.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  const size_t written = static_cast<size_t>(logged) - 3;
  ASSERT_EQ(lines.size(), written + 2);
  for (size_t i = 0; i < written; ++i)
    ASSERT_EQ(lines[i], "<6>" + std::to_string(i) + " " + filler);
  EXPECT_EQ(lines[written],
            "<4>log: 3 lines were dropped: journald did not read the daemon's log in time");
  EXPECT_EQ(lines[written + 1], "<3>after");
  EXPECT_EQ(sink->dropped(), 0u);
}

}  // namespace
}  // namespace rdma_eventd::daemon
