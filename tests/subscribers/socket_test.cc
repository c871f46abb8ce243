// The socket itself: what a client that sends nothing gets (socat, jq), where the socket lives,
// and the limit on subscribers.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

using rdmatest::SpawnOptions;

TEST(Socket, SocatWithNoRequestGetsTheHelloThenEveryRecordExactlyAsTheJournalHasIt) {
  // Given a daemon that also prints its records (the same text the journal's RDMA_RECORD
  // gets), `socat - UNIX-CONNECT:` receives a hello and then those lines byte for byte.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.print_records = true});
  SpawnOptions so;
  so.stdin_pipe = true;  // an open stdin, as at a terminal
  Process socat = Process::spawn({"socat", "-", "UNIX-CONNECT:" + d.socket()}, so);
  const json hello = json::parse(socat.require_next_line(10s));
  EXPECT_EQ(hello, (json{{"type", "hello"},
                         {"protocol", 1},
                         {"version", hello["version"]},
                         {"stream", d.stream()},
                         {"host", hello["host"]},
                         {"seq", 0},
                         {"subscriber", 1},
                         {"max_request_bytes", 4096}}));

  inject(sim, {"port", "down", "mlx5_0/1"});
  inject(sim, {"port", "up", "mlx5_0/1"});
  inject(sim, {"gid", "add-ip", "mlx5_1/1", "192.168.1.5", "--netdev", "ens1f0"});
  std::vector<std::string> printed, received;
  for (int i = 0; i < 4; ++i) {
    printed.push_back(d.process().require_next_line(10s));
    received.push_back(socat.require_next_line(10s));
  }
  EXPECT_EQ(received, printed);
  EXPECT_EQ(json::parse(received[0])["event"], "port_err");
  EXPECT_EQ(json::parse(received[3])["event"], "gid_change");

  // Closing stdin makes socat shut down its side; the daemon then ends the connection.
  socat.close_stdin();
  EXPECT_TRUE(socat.require_exit(10s).success());
}

TEST(Socket, SocatIntoJqWorksOutOfTheBox) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  SpawnOptions so;
  so.stdin_pipe = true;
  Process pipeline = Process::spawn(
      {"sh", "-c",
       "socat - UNIX-CONNECT:\"$1\" | jq --unbuffered -c '[.type, .event, .device, .port, .seq]'",
       "sh", d.socket()},
      so);
  EXPECT_EQ(pipeline.require_next_line(10s), R"(["hello",null,null,null,0])");
  inject(sim, {"port", "down", "mlx5_1/2"});
  EXPECT_EQ(pipeline.require_next_line(10s), R"([null,"port_err","mlx5_1",2,1])");
  inject(sim, {"port", "up", "mlx5_1/2"});
  EXPECT_EQ(pipeline.require_next_line(10s), R"([null,"port_active","mlx5_1",2,2])");
  pipeline.close_stdin();  // socat, then jq, then sh end on their own
  EXPECT_TRUE(pipeline.require_exit(10s).success()) << pipeline.describe();
}

// A socket file that nobody listens on, as a daemon that crashed leaves behind.
void make_stale_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(Socket, AStaleSocketIsReplacedAndTheSocketGoesAwayWithTheDaemon) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sock");
  const std::string path = dir.file("events.sock");
  make_stale_socket(path);
  {
    HubDaemon d(sim, {.extra_args = {"--socket", path}});
    LineClient c(path);
    EXPECT_EQ(c.require_json(10s)["type"], "hello");
    EXPECT_EQ(mode_of(path), 0660u);
    EXPECT_TRUE(d.stop().success());
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the daemon left its socket behind";
}

TEST(Socket, ASecondDaemonOnTheSamePathRefusesToStart) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon first(sim);
  const rdmatest::CommandResult second =
      sim.run({rdmatest::bin("rdma-eventd"), "-f", "--no-journal", "--socket", first.socket()});
  EXPECT_EQ(second.exit_code(), 1);
  EXPECT_NE(second.err.find(first.socket() + ": another rdma-eventd is listening there"),
            std::string::npos)
      << second.err;
  // The first one is untouched and still serves.
  LineClient c(first.socket());
  EXPECT_EQ(c.require_json(10s)["type"], "hello");
}

TEST(Socket, APathThatIsNotASocketIsLeftAlone) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sock");
  const std::string path = dir.write("events.sock", "precious");
  const rdmatest::CommandResult r =
      sim.run({rdmatest::bin("rdma-eventd"), "-f", "--no-journal", "--socket", path});
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(r.err.find(path + " exists and is not a socket; not replacing it"), std::string::npos)
      << r.err;
  EXPECT_EQ(rdmatest::read_file(path), "precious");
}

TEST(Socket, MissingDirectoriesAreCreatedAndTheModeApplies) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sock");
  const std::string path = dir.file("run/rdma-eventd/events.sock");
  HubDaemon d(sim, {.socket = R"("mode": "0600")", .extra_args = {"--socket", path}});
  EXPECT_EQ(mode_of(path), 0600u);
  EXPECT_EQ(mode_of(dir.file("run/rdma-eventd")), 0755u);
  LineClient c(path);
  EXPECT_EQ(c.require_json(10s)["type"], "hello");
}

TEST(Socket, NoSocketMeansNoSocket) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.extra_args = {"--no-socket"}});
  EXPECT_NE(::access(d.socket().c_str(), F_OK), 0);
  EXPECT_TRUE(d.process().running());
  for (const auto& line : d.process().stderr_lines())
    EXPECT_EQ(line.find("subscribers: listening"), std::string::npos) << line;
}

TEST(Socket, SubscribersOverTheLimitGetAnErrorLineAndTheOthersGoOn) {
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("max_subscribers": 2)"});
  LineClient a(d.socket());
  LineClient b(d.socket());
  EXPECT_EQ(a.require_json(10s)["subscriber"], 1);
  EXPECT_EQ(b.require_json(10s)["subscriber"], 2);
  {
    LineClient refused(d.socket());
    EXPECT_EQ(
        refused.read_to_eof(10s),
        (std::vector<json>{{{"type", "error"},
                            {"error", "too_many_subscribers"},
                            {"message", "too many subscribers (socket.max_subscribers is 2)"}}}));
  }
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(a.require_json(10s)["seq"], 1);
  EXPECT_EQ(b.require_json(10s)["seq"], 1);

  // Once one leaves, there is room again: the daemon gives the slot back before it closes the
  // connection, so the end of file says it is free.
  a.shutdown_write();
  EXPECT_TRUE(a.read_to_eof(10s).empty());
  LineClient c(d.socket());
  EXPECT_EQ(c.require_json(10s)["subscriber"], 3);
  b.send(R"({"op":"status","id":1})"
         "\n");
  const json status = b.read_until(reply_to(1), 10s).back();
  EXPECT_EQ(status["subscribers"]["refused"], 1);
  EXPECT_EQ(status["subscribers"]["accepted"], 3);
}

}  // namespace
}  // namespace rdma_eventd::subtest
