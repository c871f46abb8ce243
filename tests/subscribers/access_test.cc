// Who may connect: the allow-lists of users and groups (socket.allow_users, allow_groups),
// checked against the credentials the kernel gives for every connection, with clients run
// as other users by setpriv and runuser, as an operator would.
#include <gtest/gtest.h>

#include "hub_support.h"
#include "paths.h"

namespace rdma_eventd::subtest {
namespace {

// socat reading the socket as another user: `setpriv_args` say who (setpriv(1)).
Process socat_as(const std::vector<std::string>& who, const std::string& socket) {
  std::vector<std::string> argv = who;
  argv.insert(argv.end(), {"socat", "-u", "UNIX-CONNECT:" + socket, "-"});
  return Process::spawn(argv);
}

std::vector<std::string> setpriv(int uid, int gid, const std::string& groups = "") {
  std::vector<std::string> argv = {"setpriv", "--reuid=" + std::to_string(uid),
                                   "--regid=" + std::to_string(gid)};
  if (groups.empty()) {
    argv.push_back("--clear-groups");
  } else {
    argv.push_back("--groups=" + groups);
  }
  return argv;
}

json denied(int uid, int gid) {
  return {{"type", "error"},
          {"error", "access_denied"},
          {"message", "access denied: uid " + std::to_string(uid) + " (gid " + std::to_string(gid) +
                          ") is not in socket.allow_users and in none of socket.allow_groups"}};
}

TEST(Access, AllowedUsersAndGroupMembersGetRecordsAndOthersAreRefusedWithAnErrorLine) {
  // Given allow_users [4242] and allow_groups [4343], root, uid 4242, a member of 4343 by its
  // supplementary groups and one by its primary group get the hello and the record; uid 5002
  // gets one access_denied line, then the end of the connection.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("mode": "0666", "allow_users": [4242], "allow_groups": [4343])"});
  open_directory_to_everyone(d);
  std::vector<Process> allowed;
  allowed.push_back(socat_as(setpriv(4242, 4242), d.socket()));
  allowed.push_back(socat_as(setpriv(5000, 5000, "4343"), d.socket()));
  allowed.push_back(socat_as(setpriv(5001, 4343), d.socket()));
  LineClient root(d.socket());
  for (Process& p : allowed)
    EXPECT_EQ(json::parse(p.require_next_line(10s))["type"], "hello") << p.describe();
  EXPECT_EQ(root.require_json(10s)["type"], "hello");

  Process refused = socat_as(setpriv(5002, 5002), d.socket());
  EXPECT_EQ(json::parse(refused.require_next_line(10s)), denied(5002, 5002));
  EXPECT_TRUE(refused.require_exit(10s).success()) << refused.describe();
  EXPECT_EQ(refused.stdout_lines().size(), 1u);
  d.process().require_line(
      rdmatest::contains("subscribers: refused a connection from pid " +
                         std::to_string(refused.pid()) + " (socat), uid 5002: access denied"),
      10s, rdmatest::Stream::kStderr, "the refusal in the log");

  inject(sim, {"port", "down", "mlx5_0/1"});
  const json record = root.require_json(10s);
  EXPECT_EQ(record["event"], "port_err");
  for (Process& p : allowed)
    EXPECT_EQ(json::parse(p.require_next_line(10s)), record) << p.describe();

  // Non-root connections are logged once each at info, with pid, name and uid.
  for (Process& p : allowed) {
    EXPECT_TRUE(d.logged("connected: pid " + std::to_string(p.pid()) + " (socat), uid "))
        << d.log_tail();
  }
  root.send(R"({"op":"status","id":1})"
            "\n");
  const json st = root.read_until(reply_to(1), 10s).back()["subscribers"];
  EXPECT_EQ(st["accepted"], 4);
  EXPECT_EQ(st["refused"], 1);
  EXPECT_EQ(st["refused_by"],
            json({{"max_subscribers", 0}, {"max_subscribers_per_user", 0}, {"access", 1}}));
  for (Process& p : allowed)
    p.stop();
}

TEST(Access, NamesAreResolvedAtLoadAndAReloadAppliesNewListsAtOnce) {
  // allow_users ["nobody"]: runuser -u nobody gets in, uid 4242 does not. A reload to
  // allow_groups ["nogroup"] lets in uid 4242 with primary group nogroup, keeps nobody (its
  // group is nogroup), and a reload to allow_users [4242] tells nobody it is out and closes.
  SimFabric sim(topology("two-adapters"));
  HubDaemon d(sim, {.socket = R"("mode": "0666", "allow_users": ["nobody"])"});
  open_directory_to_everyone(d);
  Process nobody = socat_as({"runuser", "-u", "nobody", "--"}, d.socket());
  EXPECT_EQ(json::parse(nobody.require_next_line(10s))["type"], "hello") << nobody.describe();
  {
    Process other = socat_as(setpriv(4242, 65534), d.socket());
    EXPECT_EQ(json::parse(other.require_next_line(10s)), denied(4242, 65534));
    EXPECT_TRUE(other.require_exit(10s).success());
  }

  reload(d, R"("mode": "0666", "allow_groups": ["nogroup"])");
  Process member = socat_as(setpriv(4242, 65534), d.socket());
  EXPECT_EQ(json::parse(member.require_next_line(10s))["type"], "hello") << member.describe();

  reload(d, R"("mode": "0666", "allow_users": [4242])");
  EXPECT_EQ(json::parse(nobody.require_next_line(10s)),
            json({{"type", "error"},
                  {"error", "access_denied"},
                  {"message",
                   "access denied: uid 65534 (gid 65534) is not in socket.allow_users and in none "
                   "of socket.allow_groups; closing"}}));
  EXPECT_TRUE(nobody.require_exit(10s).success()) << nobody.describe();
  inject(sim, {"port", "down", "mlx5_0/1"});
  EXPECT_EQ(json::parse(member.require_next_line(10s))["event"], "port_err");
  member.stop();
}

// The status reply's subscriber entries, asked on `c` (which must not be receiving records).
json status_subscribers(LineClient& c, int id) {
  c.send(json{{"op", "status"}, {"id", id}}.dump() + "\n");
  return c.read_until(reply_to(id), 10s).back()["subscribers"];
}

TEST(Access, ASubscriberLeftOutByAReloadGivesBackItsSlotAtOnceEvenIfItNeverReads) {
  // Given max_subscribers 2: uid 4242 connects and reads nothing while a storm fills its
  // socket and its queue; root holds the other slot. A reload that leaves 4242 out gives its
  // slot back at once, so uid 4343 gets in, and the status no longer counts or lists 4242.
  // When 4242 reads at last, it gets what the kernel already held, whole lines, then the
  // access_denied line, then the end: nothing that was still queued for it, so not the storm's
  // last record, which was.
  SimFabric sim(topology("two-adapters"));
  const std::string limits = R"("mode": "0666", "max_subscribers": 2, "max_queued_bytes": 65536)";
  HubDaemon d(sim, {.socket = limits + R"(, "allow_users": [4242, 4343])"});
  open_directory_to_everyone(d);
  LineClient silent(d.socket(), Credentials{4242, 4242, {}});
  LineClient root(d.socket());
  EXPECT_EQ(root.require_json(10s)["type"], "hello");
  root.send(R"({"op":"subscribe","id":"quiet","events":["device_removed"]})"
            "\n");
  root.read_until(reply_to("quiet"), 10s);

  storm(sim, 5000, "mlx5_0/1");  // some 2 MB of records: far more than a socket and 64 KiB hold
  int id = 0;
  json silent_entry;
  // What a subscriber holds queued and lost is accounting state with nothing to wait on:
  // polled.
  ASSERT_TRUE(rdmatest::wait_until(
      [&] {
        root.send(json{{"op", "ping"}, {"id", ++id}}.dump() + "\n");
        if (root.read_until(reply_to(id), 10s).back()["seq"] != 5000) return false;
        const json subscribers = status_subscribers(root, ++id);
        for (const json& s : subscribers["list"]) {
          if (s["uid"] == 4242) silent_entry = s;
        }
        return silent_entry.is_object() && silent_entry["records_lost"] > 0 &&
               silent_entry["bytes_queued"] > 0;
      },
      30s))
      << silent_entry.dump();

  reload(d, limits + R"(, "allow_users": [4343])");
  LineClient other(d.socket(), Credentials{4343, 4343, {}});
  EXPECT_EQ(other.require_json(10s)["type"], "hello");
  const json subscribers = status_subscribers(root, ++id);
  EXPECT_EQ(subscribers["count"], 2);
  std::vector<uint64_t> uids;
  for (const json& s : subscribers["list"])
    uids.push_back(s["uid"].get<uint64_t>());
  EXPECT_EQ(uids, (std::vector<uint64_t>{0, 4343}));

  const std::vector<json> lines = silent.read_to_eof(30s);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(),
            json({{"type", "error"},
                  {"error", "access_denied"},
                  {"message",
                   "access denied: uid 4242 (gid 4242) is not in socket.allow_users and in none "
                   "of socket.allow_groups; closing"}}));
  // Before it: the hello, then records and loss notices only, fewer records than the storm made,
  // and none of those that were still queued when the reload came.
  EXPECT_EQ(lines.front()["type"], "hello");
  size_t records = 0;
  uint64_t last_seq = 0;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    if (is_record(lines[i])) {
      ++records;
      last_seq = lines[i]["seq"].get<uint64_t>();
    } else {
      EXPECT_EQ(lines[i]["type"], "lost") << lines[i].dump();
    }
  }
  EXPECT_LT(records, 5000u);
  EXPECT_LT(last_seq, 5000u);
  EXPECT_TRUE(silent.eof());
}

TEST(Access, AnUnknownNameStopsTheStartWith78AndAReloadWithOneKeepsTheOldLists) {
  SimFabric sim(topology("two-adapters"));
  rdmatest::TempDir dir("rdma-access");
  const std::string config =
      dir.write("c.json", R"({"socket": {"allow_users": ["nobody", "no-such-user-x"]}})");
  const rdmatest::CommandResult r = sim.run({rdmatest::bin("rdma-eventd"), "-f", "--no-journal",
                                             "-c", config, "--socket", dir.file("events.sock")});
  EXPECT_EQ(r.exit_code(), 78) << r.err;
  EXPECT_NE(r.err.find(config + ": socket.allow_users[1]: no user named 'no-such-user-x'"),
            std::string::npos)
      << r.err;

  HubDaemon d(sim, {.socket = R"("mode": "0666", "allow_users": [4242])"});
  open_directory_to_everyone(d);
  reload(d, R"("mode": "0666", "allow_groups": ["no-such-group-x"])", /*expect_failure=*/true);
  EXPECT_TRUE(d.logged("socket.allow_groups[0]: no group named 'no-such-group-x'")) << d.log_tail();
  Process still_out = socat_as(setpriv(4243, 4243), d.socket());
  EXPECT_EQ(json::parse(still_out.require_next_line(10s)), denied(4243, 4243));
  Process still_in = socat_as(setpriv(4242, 4242), d.socket());
  EXPECT_EQ(json::parse(still_in.require_next_line(10s))["type"], "hello");
  still_in.stop();
}

}  // namespace
}  // namespace rdma_eventd::subtest
