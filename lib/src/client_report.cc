// Application reports: one request over a connection of its own (docs/protocol.md, "report").
// A connection per call costs a connect and a hello, which is nothing next to the failure being
// reported, and leaves the caller no client to share between threads.
#include <algorithm>
#include <new>
#include <string>

#include "client/client.hpp"

namespace rdma_eventd {

ClientStatus report_event(const std::string& path, const Report& report, Client::Duration timeout,
                          uint64_t* seq, std::string* error) noexcept {
  try {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Client> client;
    ClientStatus s = Client::connect(path, timeout, client, error);
    if (s != ClientStatus::kOk) return s;
    Client::Duration left = timeout;
    if (timeout.count() >= 0) {
      const auto spent =
          std::chrono::duration_cast<Client::Duration>(std::chrono::steady_clock::now() - start);
      left = std::max(Client::Duration(0), timeout - spent);
    }
    Request request;
    request.op = Op::kReport;
    request.report = report;
    Message reply;
    s = client->call(std::move(request), left, reply);
    if (s != ClientStatus::kOk) {
      if (error) *error = client->last_error();
      return s;
    }
    if (seq) *seq = reply.reply() ? reply.reply()->seq : 0;
    return ClientStatus::kOk;
  } catch (const std::bad_alloc&) {
    return ClientStatus::kNoMemory;
  } catch (...) {
    if (error) *error = "unexpected failure";
    return ClientStatus::kProtocol;
  }
}

}  // namespace rdma_eventd
