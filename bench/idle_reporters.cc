#include "idle_reporters.h"

#include <chrono>
#include <thread>

#include "rdma_eventd/client.h"
#include "subscribers.h"
#include "util.h"

namespace rdma_eventd::bench {

IdleReporters::IdleReporters(const std::string& socket, size_t count) {
  if (count == 0) return;
  raise_nofile_limit();
  reporters_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    rdmaev_reporter* r = nullptr;
    if (const int rc = rdmaev_reporter_open(socket.c_str(), &r); rc != RDMAEV_OK) {
      throw BenchError("reporter " + std::to_string(i + 1) + " of " + std::to_string(count) + ": " +
                       rdmaev_last_error(nullptr));
    }
    reporters_.push_back(r);
  }
  // The connections are accepted by the daemon's loop, after rdmaev_reporter_open() returns.
  // The status's own connection is one subscriber more. A daemon from before the report socket
  // has no "reporters" in its status.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const nlohmann::json st = daemon_status(socket);
    const nlohmann::json none = nlohmann::json::object();
    const uint64_t reporters = st.value("reporters", none).value("count", uint64_t{0});
    const uint64_t subscribers = st.value("subscribers", none).value("count", uint64_t{0});
    if (reporters >= count) {
      counted_as_ = "report";
      return;
    }
    if (reporters == 0 && subscribers >= count + 1) {
      counted_as_ = "events";
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw BenchError("the daemon took " + std::to_string(reporters) + " reporters and " +
                       std::to_string(subscribers) + " subscribers, not the " +
                       std::to_string(count) + " reporters opened, within 30 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

IdleReporters::~IdleReporters() {
  for (rdmaev_reporter* r : reporters_)
    rdmaev_reporter_close(r);
}

nlohmann::json IdleReporters::describe() const {
  return {{"count", reporters_.size()}, {"counted_as", counted_as_}};
}

}  // namespace rdma_eventd::bench
