// Socket activation outside systemd: systemd-socket-activate listens, runs the real daemon on
// the first connection and hands it the socket (LISTEN_FDS, LISTEN_FDNAMES), as systemd does
// with rdma-eventd.socket.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"

namespace rdma_eventd::systest {
namespace {

using namespace std::chrono_literals;
using rdmatest::inject;
using rdmatest::LineClient;
using rdmatest::Notification;
using rdmatest::NotifyReceiver;
using rdmatest::Process;
using rdmatest::SimFabric;
using rdmatest::topology;

// systemd-socket-activate ARGS... rdma-eventd -f --no-journal, with the simulator's
// environment passed on (it gives its child only the variables named with -E).
Process activate(const SimFabric& sim, const std::vector<std::string>& activate_args,
                 const NotifyReceiver* notify = nullptr) {
  std::vector<std::string> argv = {"systemd-socket-activate"};
  argv.insert(argv.end(), activate_args.begin(), activate_args.end());
  rdmatest::SpawnOptions opts = sim.spawn_options();
  if (notify) opts = notify->spawn_options(opts);
  for (const auto& [name, value] : opts.set)
    argv.push_back("--setenv=" + name + "=" + value);
  argv.insert(argv.end(), {rdmatest::bin("rdma-eventd"), "-f", "--no-journal"});
  return Process::spawn(argv, opts);
}

// systemd-socket-activate listening on DIR/events.sock (FileDescriptorName=events, and `more`
// arguments), the daemon's notifications going to `notify`; constructed once it listens.
struct Activation {
  Activation(const SimFabric& sim, const std::vector<std::string>& more = {})
      : act(activate(sim, with(more, {"--listen=" + path, "--fdname=events"}), &notify)) {
    act.require_line(rdmatest::contains("Listening on " + path), 20s, rdmatest::Stream::kStderr);
  }
  static std::vector<std::string> with(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  rdmatest::TempDir dir{"rdma-activate"};
  const std::string path = dir.file("events.sock");
  NotifyReceiver notify;
  Process act;
};

bool is_socket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

TEST(Activation, TheFirstClientStartsTheDaemonAndIsServed) {
  // The client connects while no daemon runs at all: its connection waits in the backlog, the
  // daemon starts, adopts the socket and serves it: the hello, then the records.
  SimFabric sim(topology("two-adapters"));
  Activation a(sim);
  const std::string& path = a.path;
  NotifyReceiver& notify = a.notify;
  Process& act = a.act;
  EXPECT_FALSE(notify.next(0s).has_value()) << "nothing runs yet, nothing notifies";

  LineClient client(path);
  const auto hello = client.require_json(30s, "the hello");
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["subscriber"], 1);
  act.require_line(rdmatest::contains("listening on " + path + " (passed by the service manager)"),
                   10s, rdmatest::Stream::kStderr);
  notify.require([](const Notification& m) { return m.has("READY", "1"); }, 30s, "READY=1");

  inject(sim, {"port", "down", "mlx5_0/1"});
  const auto record = client.require_json(20s, "the port_err record");
  EXPECT_EQ(record["event"], "port_err");
  EXPECT_EQ(record["device"], "mlx5_0");
  EXPECT_EQ(record["port"], 1);
  // After the three ports' first health verdicts (seq 1 to 3), published at start: port health
  // is on by default.
  EXPECT_EQ(record["seq"], 4);

  // The path belongs to whoever opened the socket: the daemon leaves it when it stops.
  act.signal(SIGTERM);
  EXPECT_TRUE(act.require_exit(20s).success()) << act.describe();
  EXPECT_TRUE(is_socket(path));
}

TEST(Activation, ClientsThatConnectBeforeReadyAreAllServed) {
  // Several clients queue up before the daemon has started; each gets its hello and the same
  // record.
  SimFabric sim(topology("two-adapters"));
  Activation a(sim);
  std::vector<std::unique_ptr<LineClient>> clients;
  for (int i = 0; i < 4; ++i)
    clients.push_back(std::make_unique<LineClient>(a.path));
  std::vector<int> ids;
  for (auto& c : clients)
    ids.push_back(c->require_json(30s, "the hello")["subscriber"].get<int>());
  EXPECT_EQ(ids, (std::vector<int>{1, 2, 3, 4}));
  // READY=1 came before any of them was accepted: they waited in the backlog until the loop
  // ran.
  EXPECT_EQ(
      a.notify.require([](const Notification& m) { return m.has("READY", "1"); }, 20s, "READY=1")
          .value("STATUS"),
      "2 devices, 3 ports up, 0 down, 0 subscribers");
  inject(sim, {"lid", "mlx5_0/1", "23"});
  for (auto& c : clients) {
    const auto record = c->require_json(20s, "the lid_change record");
    EXPECT_EQ(record["event"], "lid_change");
    EXPECT_EQ(record["seq"], 4);  // after the three first health verdicts
  }
}

TEST(Activation, OnlyTheSocketNamedEventsIsServed) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-activate");
  const std::string other = dir.file("other.sock");
  const std::string events = dir.file("events.sock");
  Process act = activate(sim, {"--listen=" + other, "--listen=" + events, "--fdname=other:events"});
  act.require_line(rdmatest::contains("Listening on " + events), 20s, rdmatest::Stream::kStderr);
  LineClient client(events);
  EXPECT_EQ(client.require_json(30s, "the hello")["type"], "hello");
  act.require_line(rdmatest::contains("ignoring descriptor 3 (\"other\")"), 10s,
                   rdmatest::Stream::kStderr);
}

TEST(Activation, TheReportSocketIsTheOneAtTheEventsSocketsPathWithReport) {
  // As rdma-eventd.socket passes them: two sockets, both named "events" (FileDescriptorName=
  // names all of a unit's). The one at the other's path with ".report" is the report socket,
  // whichever comes first.
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-activate");
  const std::string events = dir.file("events.sock");
  const std::string report = events + ".report";
  Process act =
      activate(sim, {"--listen=" + report, "--listen=" + events, "--fdname=events:events"});
  act.require_line(rdmatest::contains("Listening on " + events), 20s, rdmatest::Stream::kStderr);
  // The first client, a reporter, starts the daemon.
  LineClient reporter(report);
  const auto hello = reporter.require_json(30s, "the reporter's hello");
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_TRUE(hello.contains("reporter")) << hello.dump();
  EXPECT_FALSE(hello.contains("subscriber")) << hello.dump();
  act.require_line(
      rdmatest::contains("reporters: listening on " + report + " (passed by the service manager)"),
      10s, rdmatest::Stream::kStderr);
  LineClient subscriber(events);
  EXPECT_TRUE(subscriber.require_json(30s, "the subscriber's hello").contains("subscriber"));
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(subscriber.require_json(20s, "the port_err record")["event"], "port_err");
  reporter.send(R"({"op":"ping","id":1})"
                "\n");
  // Its reply, and no record before it.
  EXPECT_EQ(reporter.require_json(10s)["type"], "reply");
}

TEST(Activation, PassedTheEventsSocketAloneTheDaemonMakesNoReportSocket) {
  // The service manager's directory is not the daemon's to add a socket to: its reporters are
  // subscribers, as with a unit from before the report socket.
  SimFabric sim(topology("two-adapters"));
  Activation a(sim);
  LineClient client(a.path);
  EXPECT_TRUE(client.require_json(30s, "the hello").contains("subscriber"));
  a.act.require_line(rdmatest::contains("reporters: the service manager passed no report socket"),
                     10s, rdmatest::Stream::kStderr);
  EXPECT_FALSE(is_socket(a.path + ".report"));
}

TEST(Activation, ASocketThatIsNotAListeningStreamStopsTheStart) {
  // A datagram socket passed by mistake (a wrong .socket unit): one message, exit 1.
  SimFabric sim(topology("two-adapters"));
  Activation a(sim, {"--datagram"});
  const std::string& path = a.path;
  Process& act = a.act;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 1);
  ::close(fd);
  const auto status = act.require_exit(30s);
  EXPECT_TRUE(status.exited && status.code == 1) << act.describe();
  act.require_line(rdmatest::contains("the socket passed by the service manager (fd 3) is not a "
                                      "listening Unix stream socket"),
                   0s, rdmatest::Stream::kStderr);
}

}  // namespace
}  // namespace rdma_eventd::systest
