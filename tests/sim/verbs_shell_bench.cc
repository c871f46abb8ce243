// verbs_shell: the commands that read many events or time something.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "verbs_shell.h"

namespace verbs_shell {

using nlohmann::json;

json cmd_drain(Ctx& c, uint64_t n) {
  // Exactly-once check material: the count, the count per (type, port), and an order-sensitive
  // hash (FNV-1a over type and port of every event, in order).
  std::map<std::string, uint64_t> per;
  uint64_t hash = 1469598103934665603ULL;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    ibv_async_event ev;
    if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", i}}, -1);
    const uint32_t words[2] = {static_cast<uint32_t>(ev.event_type),
                               static_cast<uint32_t>(ev.element.port_num)};
    for (size_t b = 0; b < sizeof words; ++b)
      hash = (hash ^ reinterpret_cast<const uint8_t*>(words)[b]) * 1099511628211ULL;
    ++per[std::to_string(ev.event_type) + "/" + std::to_string(ev.element.port_num)];
    ibv_ack_async_event(&ev);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"read", n}, {"per", per}, {"hash", std::to_string(hash)}, {"seconds", s}};
}

// A bare consumer: ibv_get_async_event + ibv_ack_async_event, nothing else; timed from the
// first event to the last.
json cmd_consume(Ctx& c, uint64_t n) {
  ibv_async_event ev;
  if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", 0}}, -1);
  ibv_ack_async_event(&ev);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1; i < n; ++i) {
    if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", i}}, -1);
    ibv_ack_async_event(&ev);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"read", n}, {"seconds", s}, {"events_per_second", s > 0 ? (n - 1) / s : 0}};
}

// The same 16-byte read loop on an ordinary pipe that a writer thread keeps full with 1 MiB
// writes: what this machine allows a bare consumer, with no simulator involved.
json cmd_consume_pipe(uint64_t n) {
  int fds[2];
  if (pipe(fds) != 0) return {{"ret", -1}};
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  std::thread writer([fd = fds[1], n] {
    std::vector<uint8_t> chunk(1 << 20, 0);
    for (uint64_t left = n * 16; left > 0;) {
      const size_t len = std::min<uint64_t>(left, chunk.size());
      const ssize_t w = write(fd, chunk.data(), len);
      if (w <= 0) break;
      left -= static_cast<uint64_t>(w);
    }
  });
  uint8_t rec[16];
  if (read(fds[0], rec, 16) != 16) n = 0;
  const auto start = std::chrono::steady_clock::now();
  uint64_t got = n ? 1 : 0;
  for (; got < n; ++got)
    if (read(fds[0], rec, 16) != 16) break;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  writer.join();
  close(fds[0]);
  close(fds[1]);
  return {
      {"ret", 0}, {"read", got}, {"seconds", s}, {"events_per_second", s > 0 ? (got - 1) / s : 0}};
}

// The cost of a query: N ibv_query_port calls (the inline path), nanoseconds per call.
json cmd_query_cost(Ctx& c, uint8_t port, uint64_t n) {
  ibv_port_attr a;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i)
    if (___ibv_query_port(c.ctx, port, &a)) return with_errno({}, -1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"queries", n}, {"ns_per_query", s * 1e9 / static_cast<double>(n)}};
}

}  // namespace verbs_shell
