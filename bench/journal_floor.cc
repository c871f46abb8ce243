// The floor under the journal: what handing each entry to journald costs the sender on this
// machine, with nothing else done.
//
// A bare sender stands in for the daemon's journal writer with everything but the send taken
// away: one entry of the daemon's shape (its sixteen fields before RDMA_RECORD, a port_err's
// values, and a record-sized JSON line), built once, sent `--count` times as the writer sends
// it: one send of the whole datagram (the fields, then the line) on a datagram socket connected
// once to journald's, with the writer's send buffer, blocking while journald catches
// up. No record, no formatting, no thread handoff. Its CPU time per entry is the least any
// program pays to put the daemon's entries into journald at journald's pace: the copies into
// the socket, the datagrams, and the sleeps and wakeups while journald's queue is full.
// run.sh measures journald's own CPU time around it, as around the daemon's journal-on storm.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "proc_stats.h"
#include "util.h"

namespace rdma_eventd::bench {
namespace {

// The daemon's send buffer for journald (systemd/journal_socket.h), 16 KiB once doubled.
constexpr int kSendBuffer = 8192;  // the kernel doubles it, as for the daemon

void field(std::string& out, const char* key, const std::string& value) {
  out.append(key).append(1, '=').append(value).append(1, '\n');
}

// The fields the daemon writes before RDMA_RECORD for a port_err on an InfiniBand port.
std::string entry_head() {
  std::string h;
  field(h, "MESSAGE", "mlx5_0 port 1: link down (ACTIVE -> DOWN), was 200 Gb/s 4X HDR");
  field(h, "PRIORITY", "4");
  field(h, "MESSAGE_ID", "11b9171c80eb4233a8a8a39e9b93196c");
  field(h, "SYSLOG_IDENTIFIER", "rdma-eventd");
  field(h, "RDMA_EVENT", "port_err");
  field(h, "RDMA_EVENT_TYPE", "10");
  field(h, "RDMA_SEVERITY", "warning");
  field(h, "RDMA_DEVICE", "mlx5_0");
  field(h, "RDMA_NODE_GUID", "248a:0703:00a1:b2c0");
  field(h, "RDMA_PORT", "1");
  field(h, "RDMA_LINK_LAYER", "infiniband");
  field(h, "RDMA_PORT_STATE", "down");
  field(h, "RDMA_LID", "0");
  field(h, "RDMA_SEQ", "1000000");
  field(h, "RDMA_STREAM", "0123456789abcdef0123456789abcdef");
  h += "RDMA_RECORD=";
  return h;
}

// A JSON line of `bytes`, newline included, as the record's line ends the daemon's entry.
std::string record_line(size_t bytes) {
  std::string l = R"({"schema":1,"pad":")";
  const size_t tail = 3;  // "}\n
  if (bytes > l.size() + tail) l.append(bytes - l.size() - tail, 'x');
  l += "\"}\n";
  return l;
}

}  // namespace

int cmd_journal_floor(int argc, char** argv) {
  const Args a(argc, argv,
               {"count", "line-bytes", "send-buffer", "socket", "figure", "run", "results"}, {});
  const uint64_t count = a.num("count", 100000);
  const std::string path = a.str("socket", "/run/systemd/journal/socket");
  const std::string entry = entry_head() + record_line(a.num("line-bytes", 410));

  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) throw BenchError(errno_text("socket"));
  const int size = static_cast<int>(a.num("send-buffer", kSendBuffer));
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size) != 0)
    throw BenchError(errno_text("SO_SNDBUF"));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw BenchError(path + ": path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw BenchError(errno_text("connect " + path));

  const CpuTime before = cpu_time(::getpid());
  const int64_t start = mono_ns();
  for (uint64_t i = 0; i < count; ++i) {
    while (::send(fd.get(), entry.data(), entry.size(), MSG_NOSIGNAL) < 0) {
      if (errno != EINTR) throw BenchError(errno_text("send to " + path));
    }
  }
  const double seconds = static_cast<double>(mono_ns() - start) / 1e9;
  const CpuTime cpu = cpu_time(::getpid()) - before;

  nlohmann::json r = {
      {"kind", "journal_floor"},     {"figure", a.str("figure", "")},
      {"run", a.num("run", 0)},      {"count", count},
      {"entry_bytes", entry.size()}, {"send_buffer", size},
      {"seconds", seconds},          {"entries_per_second", static_cast<double>(count) / seconds}};
  add_cpu(r, cpu, count);
  emit_result(a.str("results", ""), r.dump());
  return 0;
}

}  // namespace rdma_eventd::bench
