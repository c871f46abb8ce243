// The journal writer's connected socket, against a datagram socket of the test's own at a path
// of its own: what journald's native socket would receive, and what happens when it is
// replaced, missing, or sent more than a datagram holds.
#include "systemd/journal_socket.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {
namespace {

using internal::UniqueFd;

class JournalSocketTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(::mkdtemp(dir_), nullptr); }
  void TearDown() override { std::system(("rm -rf " + std::string(dir_)).c_str()); }

  std::string path() const { return std::string(dir_) + "/socket"; }

  // A receiving socket bound at path(), as journald's: nonblocking, so that a test reads what
  // is there without waiting.
  UniqueFd bind_receiver() const {
    UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    EXPECT_TRUE(fd);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path().c_str(), sizeof addr.sun_path - 1);
    ::unlink(addr.sun_path);
    EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0)
        << std::strerror(errno);
    return fd;
  }

  // The next datagram waiting on `fd`, or "<none>".
  static std::string receive(const UniqueFd& fd) {
    std::string buf(65536, '\0');
    const ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0) return "<none>";
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

  char dir_[40] = "/tmp/rdma-journal-socket-XXXXXX";
};

TEST_F(JournalSocketTest, SendsEachEntryAsOneDatagramAsItWasGiven) {
  UniqueFd receiver = bind_receiver();
  JournalSocket socket(path());
  ASSERT_EQ(socket.send("MESSAGE=one\nPRIORITY=6\n"), 0);
  ASSERT_EQ(socket.send(std::string("MESSAGE\n\x01\0\0\0\0\0\0\0\n\n", 18)), 0);
  EXPECT_EQ(receive(receiver), "MESSAGE=one\nPRIORITY=6\n");
  EXPECT_EQ(receive(receiver), std::string("MESSAGE\n\x01\0\0\0\0\0\0\0\n\n", 18));
  EXPECT_EQ(receive(receiver), "<none>");
}

TEST_F(JournalSocketTest, FollowsAJournaldThatWasReplacedByANewSocketAtThePath) {
  UniqueFd first = bind_receiver();
  JournalSocket socket(path());
  ASSERT_EQ(socket.send("MESSAGE=before\n"), 0);
  EXPECT_EQ(receive(first), "MESSAGE=before\n");
  first.reset();                      // journald exits...
  UniqueFd second = bind_receiver();  // ...and its successor binds the same path
  ASSERT_EQ(socket.send("MESSAGE=after\n"), 0);
  EXPECT_EQ(receive(second), "MESSAGE=after\n");
  EXPECT_EQ(socket.send("MESSAGE=again\n"), 0);
  EXPECT_EQ(receive(second), "MESSAGE=again\n");
}

TEST_F(JournalSocketTest, SaysWhyWhenThereIsNoJournaldAndSendsOnceThereIsOne) {
  JournalSocket socket(path());
  EXPECT_EQ(socket.send("MESSAGE=lost\n"), -ENOENT);
  UniqueFd receiver = bind_receiver();
  ASSERT_EQ(socket.send("MESSAGE=found\n"), 0);
  EXPECT_EQ(receive(receiver), "MESSAGE=found\n");
}

TEST_F(JournalSocketTest, AnEntryLargerThanItsSendBufferIsRefusedWholeForTheCallerToSendElsewhere) {
  UniqueFd receiver = bind_receiver();
  JournalSocket socket(path());
  // The kernel doubles the requested buffer; anything at least that large cannot be one datagram.
  const std::string large = "MESSAGE=" + std::string(2 * JournalSocket::kSendBuffer, 'x') + "\n";
  EXPECT_EQ(socket.send(large), -EMSGSIZE);
  EXPECT_EQ(receive(receiver), "<none>") << "nothing of it was sent";
  ASSERT_EQ(socket.send("MESSAGE=small\n"), 0) << "the socket stays usable";
  EXPECT_EQ(receive(receiver), "MESSAGE=small\n");
}

}  // namespace
}  // namespace rdma_eventd::daemon
