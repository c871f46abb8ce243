// One follower of the daemon, for every program that keeps something in line with it
// (rdma-eventd-slurm, rdma-eventctl metrics --textfile): it connects, subscribes, asks its
// queries again whenever a record or a `lost` line arrives (or a refresh is due), and connects
// again after an outage, with one backoff policy for every retry. It never blocks on its own and
// never reads a clock of its own: the caller polls fd() until next_deadline() and calls wake();
// time comes from a SteadyTime, so tests drive hours of outages in microseconds.
//
// The library never logs: what the program should say is handed to its policy as FollowerEvents,
// each once per change (an outage is told once, not at every retry), and counted.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "client/client.hpp"

namespace rdma_eventd {

using SteadyTimePoint = std::chrono::steady_clock::time_point;

class SteadyTime {
 public:
  virtual ~SteadyTime() = default;
  virtual SteadyTimePoint now() const = 0;
};
const SteadyTime& steady_time();  // std::chrono::steady_clock

// How long to wait before a retry: `initial`, doubling up to `max`, back to `initial` on reset.
class Backoff {
 public:
  using Duration = std::chrono::milliseconds;
  Backoff(Duration initial, Duration max) : initial_(initial), max_(max), next_(initial) {}
  // The wait for this retry; the next one is twice as long, at most max.
  Duration next() {
    const Duration now = next_;
    next_ = std::min(next_ * 2, max_);
    return now;
  }
  void reset() { next_ = initial_; }

 private:
  Duration initial_;
  Duration max_;
  Duration next_;
};

// One connection to the daemon: the Client, or a test's fake.
class DaemonConnection {
 public:
  virtual ~DaemonConnection() = default;
  virtual int fd() const = 0;
  virtual const Hello& hello() const = 0;
  virtual ClientStatus next(Message& out) = 0;
  virtual ClientStatus call(const Request& request, Client::Duration timeout, Message& reply) = 0;
  virtual const std::string& last_error() const = 0;
};

class DaemonConnector {
 public:
  virtual ~DaemonConnector() = default;
  // A connection whose hello has been read, or a status and *error.
  virtual ClientStatus connect(std::unique_ptr<DaemonConnection>& out, std::string* error) = 0;
};
// Connects to the daemon's socket at `path` with a Client.
std::unique_ptr<DaemonConnector> socket_connector(std::string path, Client::Duration timeout);

struct FollowerOptions {
  using Duration = std::chrono::milliseconds;
  Filter subscription;      // what to be woken by (records and `lost` lines)
  std::vector<Op> queries;  // asked, in order, before every act
  Duration query_timeout = std::chrono::seconds(5);
  Duration initial_backoff = std::chrono::milliseconds(500);
  Duration max_backoff = std::chrono::seconds(30);
  Duration refresh_interval{
      0};  // act again this long after an act even if nothing changed; 0: never
  Duration min_act_interval{0};  // between the end of one act and the start of the next
  // Each wait but min_act_interval (a retry's backoff, the refresh) lengthened by a random share
  // of itself, up to this (0.5: up to half again), so that the followers of a fleet, started
  // together or losing the same thing at once, spread their retries and refreshes rather than
  // calling the daemon, the controller or the disk in the same second. A retry still waits no
  // more than max_backoff (those at the cap were spread by the waits before). 0: exact waits.
  double jitter = 0;
  uint64_t jitter_seed = 0;  // the random sequence; 0: a new one for each follower
};

// What happened, for the program to log: each kind once per change.
struct FollowerEvent {
  enum Kind {
    kConnected,       // text: the stream; restarted: not the stream of the last connection
    kConnectionLost,  // text: why; connecting again after the backoff
    kDaemonAway,      // text: why it cannot be reached (once per outage)
    kActFailing,      // text: the policy's failure (once per different failure)
    kActRecovered,    // the first act that succeeded after failures
  };
  Kind kind;
  std::string text;
  bool restarted = false;
};

struct FollowerCounts {
  uint64_t wakeups = 0;
  uint64_t connects = 0;
  uint64_t connect_failures = 0;  // refused subscriptions and lost connections included
  uint64_t acts = 0;
  uint64_t act_failures = 0;
};

class FollowerPolicy {
 public:
  // kStop: the policy cannot go on (it said why); run_follower() returns kFollowerStopped.
  enum class Outcome { kDone, kRetry, kStop };
  virtual ~FollowerPolicy() = default;
  // Brings the program's world in line with the daemon. `replies` answers
  // FollowerOptions::queries in order; null while the daemon cannot be reached. kRetry (and
  // *failure) when it could not: it is called again after the backoff, with fresh replies.
  virtual Outcome act(const std::vector<Message>* replies, std::string* failure) = 0;
  virtual void on_event(const FollowerEvent& event) = 0;
  // After an act that returned kDone: act again this soon even if nothing arrives (something of
  // the policy's own falls due then, such as a drain that waits out its splay); 0: not before
  // the refresh. Exact: the policy chose the time.
  virtual std::chrono::milliseconds act_again_in() const { return std::chrono::milliseconds(0); }
};

class DaemonFollower {
 public:
  DaemonFollower(const SteadyTime& time, DaemonConnector& connector, FollowerPolicy& policy,
                 FollowerOptions options);
  DaemonFollower(const DaemonFollower&) = delete;
  DaemonFollower& operator=(const DaemonFollower&) = delete;

  // The connection's fd to poll for POLLIN; -1 while there is none.
  int fd() const;
  bool connected() const { return connection_ != nullptr; }
  // Does what is due now: connect, read what arrived, act. Call it when fd() is readable or
  // next_deadline() has passed.
  void wake();
  // When wake() has something to do without fd() becoming readable; time_point::max() when
  // nothing. Always later than now() after wake(), whatever failed: nothing spins.
  SteadyTimePoint next_deadline() const;
  const FollowerCounts& counts() const { return counts_; }
  bool stopped() const { return stopped_; }

 private:
  void connect(SteadyTimePoint now);
  void lose_connection(SteadyTimePoint now, const std::string& why);
  void read_messages(SteadyTimePoint now);
  void act(SteadyTimePoint now);
  std::chrono::milliseconds spread(std::chrono::milliseconds wait,
                                   std::chrono::milliseconds at_most);

  const SteadyTime& time_;
  DaemonConnector& connector_;
  FollowerPolicy& policy_;
  const FollowerOptions options_;
  std::unique_ptr<DaemonConnection> connection_;
  std::string stream_;
  bool away_told_ = false;
  Backoff connect_backoff_;
  Backoff act_backoff_;
  bool dirty_ = true;  // act at the start
  std::string failure_told_;
  SteadyTimePoint reconnect_at_;
  SteadyTimePoint act_at_;
  SteadyTimePoint refresh_at_;
  SteadyTimePoint again_at_ = SteadyTimePoint::max();  // the policy's act_again_in()
  FollowerCounts counts_;
  bool stopped_ = false;
  std::mt19937_64 random_;
};

// Blocks SIGTERM and SIGINT and returns a signalfd that reads them, for run_follower(); -1 (and
// errno) when it cannot be had. The followers stop on those two signals alike, from their loop.
int stop_signal_fd();

// Runs the follower until `stop_fd` (a signalfd) is readable: 0; the errno poll() failed with;
// or kFollowerStopped when the policy stopped it.
inline constexpr int kFollowerStopped = -1;
int run_follower(DaemonFollower& follower, const SteadyTime& time, int stop_fd);

}  // namespace rdma_eventd
