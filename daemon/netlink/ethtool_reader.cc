#include "netlink/ethtool_reader.h"

#include <linux/netlink.h>
#include <poll.h>

#include <array>
#include <cerrno>
#include <vector>

#include "netlink/netlink_socket.h"

namespace rdma_eventd::daemon::netlink {
namespace {

using Clock = std::chrono::steady_clock;

// One request and its answer: the message of `seq` (a reply or an error), skipping everything
// else the socket is sent meanwhile (a stand-in's notifications of other families).
class Exchange {
 public:
  Exchange(NetlinkSocket& socket, Clock::time_point deadline)
      : socket_(socket), deadline_(deadline) {}

  int run(const std::vector<uint8_t>& request, uint32_t seq, uint16_t family,
          ethtool::Message& answer) {
    if (const int err = socket_.send(request); err != 0) return err;
    std::vector<ethtool::Message> messages;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      if (left.count() <= 0) return ETIMEDOUT;
      pollfd p{socket_.fd(), POLLIN, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errno;
      if (n == 0) return ETIMEDOUT;
      size_t size = 0;
      bool from_kernel = false;
      if (const int err = socket_.receive(buffer_, &size, &from_kernel); err != 0) {
        if (err == EAGAIN || err == EINTR) continue;
        return err;
      }
      if (!from_kernel) continue;
      messages.clear();
      ethtool::decode(std::span<const uint8_t>(buffer_.data(), size), family, messages);
      for (ethtool::Message& m : messages) {
        if (m.seq != seq || m.kind == ethtool::MessageKind::kIgnored) continue;
        if (m.kind == ethtool::MessageKind::kMalformed) return EBADMSG;
        answer = std::move(m);
        return 0;
      }
    }
  }

 private:
  NetlinkSocket& socket_;
  Clock::time_point deadline_;
  std::array<uint8_t, 16384> buffer_{};
};

}  // namespace

PhyRead read_phy_stats(const std::string& netdev, const std::string& stand_in,
                       std::chrono::milliseconds timeout) {
  PhyRead out;
  NetlinkSocket socket;
  if (const int err = socket.open(NETLINK_GENERIC, stand_in); err != 0) {
    return {std::nullopt, err, "cannot open a generic netlink socket"};
  }
  Exchange exchange(socket, Clock::now() + timeout);
  const uint32_t port = socket.port_id();
  ethtool::Message family;
  if (const int err = exchange.run(ethtool::family_request(1, port), 1, 0, family); err != 0) {
    return {std::nullopt, err, "the ethtool family did not answer"};
  }
  if (family.kind == ethtool::MessageKind::kError) {
    return {std::nullopt, family.error, "the kernel has no ethtool family"};
  }
  const uint16_t id = family.family.id;
  ethtool::PhyStats stats;
  ethtool::Message fec;
  if (const int err = exchange.run(ethtool::fec_request(id, netdev, 2, port), 2, id, fec);
      err != 0) {
    return {std::nullopt, err, "FEC_GET of " + netdev};
  }
  if (fec.kind == ethtool::MessageKind::kError) {
    // EOPNOTSUPP: a driver without FEC operations (rxe's netdev, a virtual one): nothing
    // to judge bit errors by, which the caller says; ENODEV: the netdev is gone.
    return {std::nullopt, fec.error, "FEC_GET of " + netdev};
  }
  stats = fec.stats;
  ethtool::Message phy;
  if (const int err = exchange.run(ethtool::phy_stats_request(id, netdev, 3, port), 3, id, phy);
      err == 0 && phy.kind == ethtool::MessageKind::kPhyStats) {
    stats.symbol_errors = phy.stats.symbol_errors;  // informational: none when not reported
  }
  out.stats = std::move(stats);
  return out;
}

}  // namespace rdma_eventd::daemon::netlink
