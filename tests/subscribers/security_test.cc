// The catalogue of bad input in docs/security.md, each tried against the real daemon: garbage
// request bytes, a slowloris client, running out of descriptors, and tricks on the socket's
// path by another user.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

TEST(Security, GarbageBytesAreErrorsNeverACrashAndTheConnectionSurvives) {
  // Invalid UTF-8, a NUL byte, a number too large for a double, deep nesting, a lone brace:
  // each is answered with one error line that is itself valid JSON, and the same connection
  // then gets the next record.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  GreetedClient c(d);
  const std::string deep = std::string(2000, '[') + std::string(2000, ']');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"op\":\"ping\",\"id\":\"\xff\xfe\"}", "invalid_json"},
      {"\xc3\x28", "invalid_json"},
      {std::string("{\"op\":\"ping\"\0}", 14), "invalid_json"},
      {R"({"op":"since","seq":1e400})", "invalid_json"},
      {deep, "bad_request"},
      {std::string(2000, '['), "invalid_json"},
      {"{", "invalid_json"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [request, code] = cases[i];
    c.send(request + "\n");
    const json e = c.require_json(10s, "the error for case " + std::to_string(i));
    EXPECT_EQ(e["type"], "error");
    EXPECT_EQ(e["error"], code) << e.dump();
  }
  const json overflow = [&] {
    c.send(R"({"op":"ping","id":1e400})"
           "\n");
    return c.require_json(10s);
  }();
  EXPECT_EQ(overflow["message"], "invalid JSON: number overflow parsing '1e400'");
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(c.require_json(10s)["seq"], 1);
  EXPECT_TRUE(d.process().running());
}

TEST(Security, ASlowlorisClientHoldsOneSlotAndAtMostTheLineLimitAndHarmsNoOne) {
  // A client of uid 4242 dribbles a request one byte per send and never ends it. Meanwhile a
  // bystander is served at once; the dribbler's partial line is answered when it ends; one that
  // passes max_request_bytes is refused and closed; and the per-user cap bounds how many such
  // connections one user holds.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("mode": "0666", "max_request_bytes": 256, )"
                              R"("max_subscribers_per_user": 2)"});
  open_directory_to_everyone(d);
  const Credentials user{4242, 4242, {}};
  LineClient bystander(d.socket());
  LineClient slow(d.socket(), user);
  bystander.require_json(10s);
  slow.require_json(10s);
  const std::string request = R"({"op":"ping","id":"slow"})";
  for (size_t i = 0; i + 1 < request.size(); ++i) {
    slow.send(request.substr(i, 1));
    if (i % 8 == 0) {
      bystander.send(json{{"op", "ping"}, {"id", i}}.dump() + "\n");
      EXPECT_EQ(bystander.require_json(10s)["id"], i);
    }
  }
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(bystander.require_json(10s)["seq"], 1);
  EXPECT_EQ(slow.require_json(10s)["seq"], 1);  // still a subscriber like any other
  slow.send(request.substr(request.size() - 1) + "\n");
  EXPECT_EQ(slow.require_json(10s),
            json::parse(R"({"type":"reply","op":"ping","id":"slow","seq":1})"));

  // A second dribbler of the same user passes 256 bytes without a newline: refused, closed.
  LineClient greedy(d.socket(), user);
  greedy.require_json(10s);
  for (int i = 0; i < 257 && !greedy.eof(); ++i)
    greedy.send("x");
  EXPECT_EQ(greedy.read_to_eof(10s),
            (std::vector<json>{{{"type", "error"},
                                {"error", "request_too_long"},
                                {"message",
                                 "a request line is longer than socket.max_request_bytes (256 "
                                 "bytes); closing"}}}));
  // The greedy one's slot was given back before its connection closed. Two held by the user
  // again (slow and a new one): the third is refused.
  LineClient second(d.socket(), user);
  EXPECT_EQ(second.require_json(10s)["type"], "hello");
  LineClient third(d.socket(), user);
  EXPECT_EQ(third.read_to_eof(10s), refused_for_user(4242, 2));
  bystander.send(R"({"op":"ping","id":"end"})"
                 "\n");
  EXPECT_EQ(bystander.require_json(10s)["id"], "end");
}

// The main thread's state letter and context switches (/proc/PID/status).
std::pair<char, std::string> state_and_switches(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  char state = '?';
  std::string switches;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("State:", 0) == 0 && line.size() > 7) state = line[7];
    if (line.find("ctxt_switches:") != std::string::npos) switches += line;
  }
  return {state, switches};
}

// The daemon's open descriptors while its loop sleeps between events: asleep, and not one
// context switch between before and after the read, so no callback ran meanwhile. A
// descriptor a callback holds for a moment (a rescan reading the device list where udev does
// not run) would otherwise be counted as taken for good.
std::set<int> steady_descriptors(pid_t pid) {
  const auto deadline = rdmatest::Clock::now() + 20s;
  for (;;) {
    const auto before = state_and_switches(pid);
    std::set<int> open;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
      open.insert(std::stoi(e.path().filename().string()));
    if (before.first == 'S' && state_and_switches(pid) == before) return open;
    if (rdmatest::Clock::now() > deadline) throw std::runtime_error("the daemon never slept");
    std::this_thread::yield();
  }
}

// The smallest RLIMIT_NOFILE that leaves exactly `spare` descriptors free for `pid`.
uint64_t limit_leaving(pid_t pid, int spare) {
  const std::set<int> open = steady_descriptors(pid);
  int free_below = 0;
  int n = 0;
  while (free_below < spare || open.count(n)) {
    if (!open.count(n)) ++free_below;
    ++n;
  }
  return static_cast<uint64_t>(n);
}

TEST(Security, RunningOutOfDescriptorsPausesAcceptingServesTheOthersAndRecovers) {
  // With room for two more descriptors, two newcomers are served; a third waits in the backlog
  // (the daemon says it cannot accept and retries), the existing subscribers are served on,
  // and once one leaves, the waiting one is accepted.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim);
  LineClient a(d.socket());
  a.require_json(10s);
  const pid_t pid = d.process().pid();
  const std::string limit = std::to_string(limit_leaving(pid, 2));
  const rdmatest::CommandResult r = rdmatest::run_command(
      {"prlimit", "--pid", std::to_string(pid), "--nofile=" + limit + ":" + limit});
  ASSERT_EQ(r.exit_code(), 0) << r.err;
  auto b = std::make_unique<LineClient>(d.socket());
  LineClient c(d.socket());
  EXPECT_EQ(b->require_json(10s)["subscriber"], 2);
  EXPECT_EQ(c.require_json(10s)["subscriber"], 3);
  LineClient waiting(d.socket());  // connect() succeeds: the kernel queues it
  d.process().require_line(rdmatest::contains("subscribers: cannot accept: Too many open files"),
                           10s, rdmatest::Stream::kStderr, "the paused accept");
  inject(sim, {"port", "down", "mlx5_0/1"});
  for (LineClient* s : {&a, b.get(), &c})
    EXPECT_EQ(s->require_json(10s)["seq"], 1);
  a.send(R"({"op":"ping","id":1})"
         "\n");
  EXPECT_EQ(a.require_json(10s)["id"], 1);

  b.reset();  // its descriptor frees when the daemon reaps it
  const json hello = waiting.require_json(10s, "the hello once a descriptor is free");
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["seq"], 1);
  EXPECT_TRUE(d.process().running());
}

// rdma-eventd refuses `path`: it exits 1, its stderr saying `why`.
void expect_refused(const SimFabric& sim, const std::string& path, const std::string& why) {
  const rdmatest::CommandResult r =
      sim.run({rdmatest::bin("rdma-eventd"), "-f", "--no-journal", "--socket", path}, {}, 30s);
  EXPECT_EQ(r.exit_code(), 1) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
}

std::string make_dir(const std::string& path, mode_t mode, uid_t owner) {
  EXPECT_EQ(::mkdir(path.c_str(), mode), 0) << path;
  EXPECT_EQ(::chmod(path.c_str(), mode), 0) << path;  // past the umask
  EXPECT_EQ(::chown(path.c_str(), owner, owner), 0) << path;
  return path;
}

TEST(Security, ASocketDirectoryAnotherUserCanChangeIsRefused) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sec");
  const std::string theirs = make_dir(dir.file("theirs"), 0755, 65534);
  expect_refused(sim, theirs + "/events.sock",
                 "the subscriber socket's directory " + theirs +
                     " (owner uid 65534, mode 0755) belongs to another user than root or the "
                     "daemon's (uid 0): its owner could replace the socket");
  // Below it too: a directory the daemon would create there is no safer.
  expect_refused(sim, theirs + "/sub/events.sock", theirs + " (owner uid 65534");
  EXPECT_NE(::access((theirs + "/sub").c_str(), F_OK), 0) << "created inside their directory";
  const std::string open = make_dir(dir.file("open"), 0777, 0);
  expect_refused(sim, open + "/events.sock",
                 "the subscriber socket's directory " + open +
                     " (owner uid 0, mode 0777) is writable by its group or by others and not "
                     "sticky: they could replace the socket");
  const std::string group = make_dir(dir.file("group"), 0775, 0);
  expect_refused(sim, group + "/events.sock", "mode 0775) is writable by its group");
  EXPECT_NE(::access((open + "/events.sock").c_str(), F_OK), 0) << "a socket was made anyway";
}

TEST(Security, ASymlinkAtTheSocketPathIsNotFollowedAndItsTargetIsUntouched) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sec");
  const std::string target = dir.write("precious", "data");
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  const std::string path = dir.file("events.sock");
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  expect_refused(sim, path, path + " is a symbolic link; not following it");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(rdmatest::read_file(target), "data");
  // A dangling link is no better: the daemon would otherwise create the socket at its target.
  const std::string dangling = dir.file("dangling.sock");
  ASSERT_EQ(::symlink(dir.file("elsewhere.sock").c_str(), dangling.c_str()), 0);
  expect_refused(sim, dangling, dangling + " is a symbolic link");
  EXPECT_NE(::access(dir.file("elsewhere.sock").c_str(), F_OK), 0);
}

TEST(Security, ADirectoryLinkIsFollowedOnlyWhenRootOrTheDaemonsUserMadeIt) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sec");
  const std::string real = make_dir(dir.file("real"), 0755, 0);
  const std::string theirs = dir.file("theirs");
  ASSERT_EQ(::symlink(real.c_str(), theirs.c_str()), 0);
  ASSERT_EQ(::lchown(theirs.c_str(), 65534, 65534), 0);
  expect_refused(sim, theirs + "/events.sock",
                 "the subscriber socket's directory " + theirs +
                     " is a symbolic link made by uid 65534, not by root or the daemon's user: "
                     "not following it");
  // The same link made by root (as /var/run -> /run) is fine.
  const std::string ours = dir.file("ours");
  ASSERT_EQ(::symlink(real.c_str(), ours.c_str()), 0);
  HubDaemon d(sim, {.extra_args = {"--socket", ours + "/events.sock"}});
  LineClient c(ours + "/events.sock");
  EXPECT_EQ(c.require_json(10s)["type"], "hello");
}

TEST(Security, AnotherUsersSocketAtThePathIsNeitherReplacedNorChanged) {
  // In a sticky directory anyone may create the socket's name first. A live socket of another
  // user, or a stale one, is refused and left exactly as it was.
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-sec");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // the other user must reach the directory
  const std::string sticky = make_dir(dir.file("sticky"), 01777, 0);
  const std::string path = sticky + "/events.sock";
  rdmatest::SpawnOptions so;
  so.stdin_pipe = true;
  // socat -d -d says when it listens.
  Process squatter =
      Process::spawn({"setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "socat", "-d",
                      "-d", "UNIX-LISTEN:" + path + ",mode=0777", "-"},
                     so);
  squatter.require_line(rdmatest::contains("listening on AF=1"), 10s, rdmatest::Stream::kStderr,
                        "socat listening");
  expect_refused(sim, path,
                 path +
                     " is a socket of uid 4242, not of root or the daemon's user; "
                     "not replacing it");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
  EXPECT_EQ(st.st_mode & 0777, 0777u);
  EXPECT_TRUE(squatter.running());
  squatter.stop();

  // A stale socket of that user: not removed either.
  ::unlink(path.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  ASSERT_EQ(::lchown(path.c_str(), 4242, 4242), 0);
  expect_refused(sim, path, "is a socket of uid 4242");
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 4242u);
}

}  // namespace
}  // namespace rdma_eventd::subtest
