// A fake clock and a fake daemon for DaemonFollower (lib/internal/client/follower.h): tests drive
// hours of outages and restarts without a socket or a wait.
#pragma once

#include <deque>
#include <string>

#include "client/follower.h"
#include "schema/health_reply.h"

namespace follower_fakes {

using namespace std::chrono_literals;

class FakeTime final : public rdma_eventd::SteadyTime {
 public:
  rdma_eventd::SteadyTimePoint now() const override { return t; }
  rdma_eventd::SteadyTimePoint t{std::chrono::hours(1000)};
};

// The daemon's side: up or not, its stream, what it will send, how it answers.
struct FakeDaemon {
  bool up = true;
  bool refuse_subscription = false;
  bool rate_limit_queries = false;
  std::string stream = "stream-1";
  rdma_eventd::HealthReply health;
  std::deque<std::string> to_send;  // lines the open connection will read
  int generation = 0;               // a restart closes every connection of the last one
  int connected_generation = -1;    // the generation of the newest connection
  int connects = 0;
  int queries = 0;

  void restart(std::string new_stream) {
    ++generation;
    stream = std::move(new_stream);
    to_send.clear();
  }
  void stop() {
    ++generation;
    up = false;
    to_send.clear();
  }
  void send_lost() {
    to_send.push_back(R"({"type":"lost","first_seq":5,"last_seq":9,"records":5})");
  }
  std::string health_line() const;
};

class FakeConnection final : public rdma_eventd::DaemonConnection {
 public:
  explicit FakeConnection(FakeDaemon& d) : d_(d), generation_(d.generation) {
    hello_.stream = d.stream;
  }
  int fd() const override { return 1000; }
  const rdma_eventd::Hello& hello() const override { return hello_; }
  rdma_eventd::ClientStatus next(rdma_eventd::Message& out) override;
  rdma_eventd::ClientStatus call(const rdma_eventd::Request& request,
                                 rdma_eventd::Client::Duration timeout,
                                 rdma_eventd::Message& reply) override;
  const std::string& last_error() const override { return error_; }

 private:
  FakeDaemon& d_;
  int generation_;
  rdma_eventd::Hello hello_;
  std::string error_;
};

class FakeConnector final : public rdma_eventd::DaemonConnector {
 public:
  explicit FakeConnector(FakeDaemon& d) : d_(d) {}
  rdma_eventd::ClientStatus connect(std::unique_ptr<rdma_eventd::DaemonConnection>& out,
                                    std::string* error) override {
    if (!d_.up) {
      if (error) *error = "connect(/run/rdma-eventd/events.sock): No such file or directory";
      return rdma_eventd::ClientStatus::kConnect;
    }
    ++d_.connects;
    d_.connected_generation = d_.generation;
    out = std::make_unique<FakeConnection>(d_);
    return rdma_eventd::ClientStatus::kOk;
  }

 private:
  FakeDaemon& d_;
};

// Runs the follower as run_follower() would, for `span` of fake time: it wakes at each deadline,
// and at once while the daemon has something to send (its fd readable).
void drive(rdma_eventd::DaemonFollower& f, FakeTime& time, const FakeDaemon& d,
           std::chrono::milliseconds span);

}  // namespace follower_fakes
