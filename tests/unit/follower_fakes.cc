#include "follower_fakes.h"

#include "schema/json_writer.h"
#include "schema/protocol_json.h"

namespace follower_fakes {

using rdma_eventd::ClientStatus;
using rdma_eventd::Message;

std::string FakeDaemon::health_line() const {
  std::string line = R"({"type":"reply","op":"health","id":1,"seq":1)";
  rdma_eventd::JsonWriter w(line);
  w.resume_object();
  rdma_eventd::write_health(w, health);
  w.end_object();
  return line;
}

ClientStatus FakeConnection::next(Message& out) {
  if (generation_ != d_.generation) {
    error_ = "the daemon closed the connection";
    return ClientStatus::kClosed;
  }
  if (d_.to_send.empty()) return ClientStatus::kNoMessage;
  auto m = rdma_eventd::parse_line(d_.to_send.front(), &error_);
  d_.to_send.pop_front();
  if (!m) return ClientStatus::kProtocol;
  out = std::move(*m);
  return ClientStatus::kOk;
}

ClientStatus FakeConnection::call(const rdma_eventd::Request& request,
                                  rdma_eventd::Client::Duration, Message& reply) {
  if (generation_ != d_.generation) {
    error_ = "the daemon closed the connection";
    return ClientStatus::kClosed;
  }
  std::string line;
  if (request.op == rdma_eventd::Op::kSubscribe) {
    line = d_.refuse_subscription
               ? R"({"type":"error","code":"bad_filter","message":"no such event","id":1})"
               : R"({"type":"reply","op":"subscribe","id":1,"seq":1})";
  } else {
    ++d_.queries;
    line =
        d_.rate_limit_queries
            ? R"({"type":"error","code":"rate_limited","message":"over 100 requests per second","id":1})"
            : d_.health_line();
  }
  auto m = rdma_eventd::parse_line(line, &error_);
  if (!m) return ClientStatus::kProtocol;
  reply = std::move(*m);
  if (const rdma_eventd::RequestError* e = reply.error()) {
    error_ = e->message;
    return ClientStatus::kRefused;
  }
  return ClientStatus::kOk;
}

void drive(rdma_eventd::DaemonFollower& f, FakeTime& time, const FakeDaemon& d,
           std::chrono::milliseconds span) {
  const auto end = time.t + span;
  for (;;) {
    auto due = f.next_deadline();
    // Readable: a line to read, or the end of a connection the daemon closed.
    if (f.connected() && (!d.to_send.empty() || d.connected_generation != d.generation))
      due = time.t;
    if (due >= end) break;
    time.t = std::max(time.t, due);
    f.wake();
  }
  time.t = end;
}

}  // namespace follower_fakes
