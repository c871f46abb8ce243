// Reading a DEVX channel: one mlx5dv_devx_get_event, a drain of many with poll() between them,
// poll() alone, and a plain read() of the fd.
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "devx_shell.h"

namespace devx_shell {

using nlohmann::json;

namespace {

constexpr size_t kRecord = 8 + 64;

// The fields of one record: the cookie, and with data the EQE's type, subtype and data bytes.
json record_json(const uint8_t* buf, ssize_t n) {
  json j;
  uint64_t cookie;
  std::memcpy(&cookie, buf, 8);
  j["cookie"] = cookie;
  if (n >= static_cast<ssize_t>(kRecord)) {
    const uint8_t* eqe = buf + 8;
    j["eqe"] = hex(eqe, 64);
    j["type"] = eqe[1];
    j["subtype"] = eqe[3];
    j["data"] = hex(eqe + 32, 28);
  }
  return j;
}

uint64_t storm_sequence(const uint8_t* record) {
  uint64_t seq;
  std::memcpy(&seq, record + 8 + 52, 8);
  return be64toh(seq);
}

}  // namespace

json cmd_get(Channel& c, size_t len) {
  std::vector<uint8_t> buf(len ? len : 1, 0xcc);
  errno = 0;
  const ssize_t n =
      mlx5dv_devx_get_event(c.ch, reinterpret_cast<mlx5dv_devx_async_event_hdr*>(buf.data()), len);
  json j = result(n, n < 0);
  if (n >= 8) j.update(record_json(buf.data(), n));
  return j;
}

// Reads n records, waiting in poll() whenever the channel is empty, until timeout_ms passed. For
// a storm's records it checks that their sequence numbers follow each other from the first one.
json cmd_drain(Channel& c, uint64_t n, int timeout_ms) {
  fcntl(c.ch->fd, F_SETFL, fcntl(c.ch->fd, F_GETFL) | O_NONBLOCK);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(timeout_ms);
  uint8_t buf[kRecord];
  uint64_t got = 0, waits = 0;
  json overflows = json::array();
  std::map<std::string, uint64_t> types;
  bool consecutive = true;
  uint64_t first = 0, last = 0;
  int error = 0;
  while (got < n) {
    const ssize_t r = mlx5dv_devx_get_event(
        c.ch, reinterpret_cast<mlx5dv_devx_async_event_hdr*>(buf), sizeof buf);
    if (r < 0 && errno == EOVERFLOW) {
      overflows.push_back(got);
      continue;
    }
    if (r < 0 && errno == EAGAIN) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) break;
      pollfd p{c.ch->fd, POLLIN, 0};
      poll(&p, 1, static_cast<int>(left));
      ++waits;
      continue;
    }
    if (r < 0) {
      error = errno;
      break;
    }
    if (r == static_cast<ssize_t>(kRecord)) {
      ++types[std::to_string(buf[8 + 1])];
      const uint64_t seq = storm_sequence(buf);
      if (got == 0)
        first = seq;
      else if (seq != last + 1)
        consecutive = false;
      last = seq;
    }
    ++got;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"read", got},        {"overflows", overflows}, {"types", types},
          {"first_seq", first}, {"last_seq", last},       {"consecutive", consecutive},
          {"waits", waits},     {"errno", error},         {"seconds", seconds}};
}

json cmd_poll(Channel& c, int timeout_ms) {
  pollfd p{c.ch->fd, POLLIN | POLLRDNORM | POLLRDHUP, 0};
  const int n = poll(&p, 1, timeout_ms);
  json flags = json::array();
  for (const auto& [bit, name] :
       {std::pair{POLLIN, "IN"}, std::pair{POLLRDNORM, "RDNORM"}, std::pair{POLLRDHUP, "RDHUP"},
        std::pair{POLLHUP, "HUP"}, std::pair{POLLERR, "ERR"}})
    if (p.revents & bit) flags.push_back(name);
  return {{"ret", n}, {"revents", flags}};
}

json cmd_read_raw(Channel& c, size_t len) {
  std::vector<uint8_t> buf(len ? len : 1);
  errno = 0;
  const ssize_t n = read(c.ch->fd, buf.data(), len);
  json j = result(n, n < 0);
  if (n > 0) j["hex"] = hex(buf.data(), static_cast<size_t>(n));
  return j;
}

}  // namespace devx_shell
