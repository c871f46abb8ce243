// The CLI's side of the control socket: one JSON request line, one JSON reply line.
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli.h"
#include "common/protocol.h"
#include "unique_fd.h"

namespace rdmasim::cli {

using nlohmann::json;

json request(const std::string& dir, const json& req, bool wait_for_exit) {
  const std::string path = dir + "/" + kSocketFile;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("fabric directory path too long: " + dir);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw NoSimulator("no simulator is running in " + dir + " (" + std::strerror(errno) +
                      "); start one with: rdma-sim start -t TOPOLOGY.json");
  const std::string line = req.dump() + "\n";
  for (size_t off = 0; off < line.size();) {
    const ssize_t n = send(fd.get(), line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("cannot send request: ") + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  std::string in;
  char buf[65536];
  size_t nl;
  while ((nl = in.find('\n')) == std::string::npos) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("the simulator closed the connection without replying");
    in.append(buf, static_cast<size_t>(n));
  }
  json reply = json::parse(in.substr(0, nl));
  if (wait_for_exit && reply.contains("pid")) {
    // Returns once the process has exited: its connection closing is not enough (a process
    // closes its files before it has finished exiting). A pidfd becomes readable at the exit.
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, reply["pid"].get<int>(), 0)));
    if (!pidfd) return reply;  // already gone
    pollfd p{pidfd.get(), POLLIN, 0};
    int rc;
    do {
      rc = poll(&p, 1, 30000);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) throw std::runtime_error("the simulator did not exit within 30 s after stop");
  }
  return reply;
}

}  // namespace rdmasim::cli
