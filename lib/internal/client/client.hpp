// The project's own C++ subscriber client: a connection to rdma-eventd's socket that fits in the
// caller's own event loop. rdma-eventctl and the tests link it statically; librdma-eventd.so's C
// API (rdma_eventd/client.h) is built on it and exports none of it. Other programs use the C API
// or its header-only C++ wrapper (rdma_eventd/client.hpp).
//
//   std::unique_ptr<rdma_eventd::Client> c;
//   if (Client::connect(path, 5s, c, &error) != ClientStatus::kOk) ...
//   poll c->fd() for POLLIN in your loop; on every wakeup:
//   rdma_eventd::Message m;
//   while (c->next(m) == ClientStatus::kOk)               // kNoMessage: nothing complete yet
//     if (const rdma_eventd::Record* r = m.record()) handle(*r);
//
// The model is librpma's completion queue: one pollable fd, a non-blocking next() that may
// return kNoMessage (a wakeup that brings only part of a line is normal), and blocking helpers
// with a timeout (wait(), next(m, timeout), call()). The library never prints and never throws:
// every call returns a status, and last_error() says what went wrong.
//
// Requests (subscribe, snapshot, since, status, ping) never block: a request the socket cannot
// take at once is kept and sent by later calls. Each gets an id, echoed in its reply. A client
// is not thread-safe: use it from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "rdma_eventd/protocol.h"

namespace rdma_eventd {

// The same values as the C API's RDMAEV_* codes.
enum class ClientStatus : int {
  kOk = 0,
  kNoMessage = -1,  // nothing complete to return now (non-blocking calls); not an error
  kTimeout = -2,
  kInvalid = -3,   // a bad argument
  kConnect = -4,   // cannot connect to the socket
  kIo = -5,        // reading or writing the socket failed
  kClosed = -6,    // the daemon closed the connection
  kProtocol = -7,  // the daemon sent something this library does not understand
  kRefused = -8,   // the daemon answered a request with an error line
  kNoMemory = -9,
  kFull = -10,  // a reporter's queue is full (client.h, rdmaev_reporter_send)
};
std::string_view client_status_name(ClientStatus s);

class Client {
 public:
  using Duration = std::chrono::milliseconds;
  static constexpr Duration kForever{-1};

  // Connects to the socket at `path` and reads the daemon's hello, waiting up to `timeout`.
  // On failure `out` is empty and *error (when given) says why.
  static ClientStatus connect(const std::string& path, Duration timeout,
                              std::unique_ptr<Client>& out, std::string* error = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The socket: poll it for readability (POLLIN). Owned by the client.
  int fd() const;
  // What the daemon said on connect: protocol, version, stream, seq.
  const Hello& hello() const;

  // The next message without blocking; kNoMessage when none is complete yet. kClosed once the
  // daemon has closed the connection and every line it sent has been returned.
  ClientStatus next(Message& out);
  // Blocks until next() has something to return (kOk), the connection ends (kClosed) or the
  // timeout passes (kTimeout). kForever waits without limit.
  ClientStatus wait(Duration timeout);
  // wait() then next(), until a message comes or the timeout passes.
  ClientStatus next(Message& out, Duration timeout);

  // Requests. *id (when given) receives the request's id, echoed in its reply or error.
  // After subscribe(), next() returns only records matching the filter, including those the
  // daemon sent before it applied the filter.
  ClientStatus subscribe(const Filter& filter, uint64_t* id = nullptr);
  ClientStatus snapshot(uint64_t* id = nullptr);
  // Replays the records after `seq` of `stream` ("" for the current stream) from the daemon's
  // ring; when the ring no longer holds them, the reply says so and a snapshot follows.
  ClientStatus since(uint64_t seq, const std::string& stream, uint64_t* id = nullptr);
  ClientStatus status(uint64_t* id = nullptr);
  ClientStatus ping(uint64_t* id = nullptr);

  // Sends `request` (its id is assigned here) and waits for its reply. Messages that arrive
  // meanwhile are kept, in order, for next(). kRefused when the daemon answered with an error
  // line (`reply` holds it, last_error() has its message).
  ClientStatus call(Request request, Duration timeout, Message& reply);

  // What went wrong in the last call that did not return kOk or kNoMessage.
  const std::string& last_error() const;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reports an affiliated async event the application read (docs/protocol.md, "report") over a
// connection of its own, opened and closed within the call, so any thread may call it, an
// async-event thread included. It waits at most `timeout` in all (connect, hello, reply); a
// daemon that is not running is kConnect at once. *seq (when given) receives the seq of the
// app_report record; *error (when given) says why on failure. Never throws, never prints.
ClientStatus report_event(const std::string& path, const Report& report, Client::Duration timeout,
                          uint64_t* seq = nullptr, std::string* error = nullptr) noexcept;

}  // namespace rdma_eventd
