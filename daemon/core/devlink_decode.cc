#include "core/devlink_decode.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <optional>

#include "core/netlink_wire.h"

namespace rdma_eventd::daemon::devlink {
namespace {

using netlink_wire::Attr;
using netlink_wire::for_each_attr;
using netlink_wire::load;
constexpr netlink_wire::FamilyQuery kFamilyQuery{kFamilyName, kConfigGroupName, kMaxNameLength,
                                                 netlink_wire::Repeated::kLastCounts};

bool str(const Attr& a, std::string& out, std::string_view what, std::string& problem) {
  return netlink_wire::name_attr(a, out, what, kMaxNameLength, problem);
}

template <typename T>
bool num(const Attr& a, T& out, std::string_view what, std::string& problem) {
  return netlink_wire::number_attr(a, out, what, problem);
}

// A u64 attribute as the kernel puts it (nla_put_u64_64bit: 8 bytes); 4 accepted as a u32.
bool u64(const Attr& a, uint64_t& out, std::string_view what, std::string& problem) {
  if (a.payload.size() == sizeof(uint32_t)) {
    out = load<uint32_t>(a.payload.data());
    return true;
  }
  return num(a, out, what, problem);
}

bool decode_reporter_nest(std::span<const uint8_t> bytes, Reporter& r, std::string& problem) {
  return for_each_attr(bytes, problem, [&](const Attr& a) {
    switch (a.type) {
      case DEVLINK_ATTR_HEALTH_REPORTER_NAME:
        return str(a, r.name, "reporter name", problem);
      case DEVLINK_ATTR_HEALTH_REPORTER_STATE: {
        uint8_t s = 0;
        if (!num(a, s, "reporter state", problem)) return false;
        r.state = s;
        return true;
      }
      case DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT:
        return u64(a, r.error_count, "error count", problem);
      case DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT:
        return u64(a, r.recover_count, "recover count", problem);
      case DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD:
        return u64(a, r.grace_period_ms, "grace period", problem);
      case DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER: {
        uint8_t v = 0;
        if (!num(a, v, "auto recover", problem)) return false;
        r.auto_recover = v != 0;
        return true;
      }
      default:
        return true;  // dump time stamps, auto dump, and what newer kernels add
    }
  });
}

// Where a message is: the instance's bus and device names and a devlink port's index (-1 none),
// which reporters and ports carry alike. True when `a` is one of them; `ok` then says whether it
// decoded.
struct Location {
  std::string& bus;
  std::string& device;
  int64_t& port_index;
};
bool location_attr(const Attr& a, const Location& l, bool& ok, std::string& problem) {
  switch (a.type) {
    case DEVLINK_ATTR_BUS_NAME:
      ok = str(a, l.bus, "bus name", problem);
      return true;
    case DEVLINK_ATTR_DEV_NAME:
      ok = str(a, l.device, "device name", problem);
      return true;
    case DEVLINK_ATTR_PORT_INDEX: {
      uint32_t index = 0;
      ok = num(a, index, "port index", problem);
      l.port_index = index;
      return true;
    }
    default:
      return false;
  }
}

void decode_reporter(std::span<const uint8_t> attrs, Message& m) {
  Reporter r;
  const Location l{r.bus, r.device, r.port_index};
  bool nest = false;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    bool ok = true;
    if (location_attr(a, l, ok, m.problem)) return ok;
    if (a.type != DEVLINK_ATTR_HEALTH_REPORTER) return true;
    nest = true;
    return decode_reporter_nest(a.payload, r, m.problem);
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  const char* missing = r.bus.empty()      ? "bus name"
                        : r.device.empty() ? "device name"
                        : !nest            ? "reporter"
                        : r.name.empty()   ? "reporter name"
                        : r.state < 0      ? "reporter state"
                                           : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  m.kind = MessageKind::kReporter;
  m.reporter = std::move(r);
}

// DEVLINK_CMD_NEW / DEL of an instance, or a port (new, dumped or deleted): told apart by the
// port index, as the port dump's replies of kernels before 6.9 carry the instance's command.
void decode_object(std::span<const uint8_t> attrs, Message& m) {
  Port p;
  const Location l{p.bus, p.device, p.index};
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    bool ok = true;
    if (location_attr(a, l, ok, m.problem)) return ok;
    if (a.type == DEVLINK_ATTR_PORT_NETDEV_IFINDEX)
      return num(a, p.netdev_ifindex, "netdev ifindex", m.problem);
    if (a.type == DEVLINK_ATTR_PORT_NETDEV_NAME) return str(a, p.netdev, "netdev name", m.problem);
    return true;  // nested instances, port type, flavour, function, ...
  });
  const bool has_index = p.index >= 0;
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  const bool port_command = m.command == DEVLINK_CMD_PORT_NEW || m.command == DEVLINK_CMD_PORT_DEL;
  const char* missing = p.bus.empty()                ? "bus name"
                        : p.device.empty()           ? "device name"
                        : port_command && !has_index ? "port index"
                                                     : nullptr;
  if (netlink_wire::malformed_if_missing(m, missing)) return;
  if (has_index) {
    p.added = m.command != DEVLINK_CMD_PORT_DEL && m.command != DEVLINK_CMD_DEL;
    m.kind = MessageKind::kPort;
    m.port = std::move(p);
    return;
  }
  m.kind = MessageKind::kInstance;
  m.instance = Instance{std::move(p.bus), std::move(p.device), m.command == DEVLINK_CMD_NEW};
}

void decode_family(std::span<const uint8_t> attrs, Message& m) {
  if (const auto f = netlink_wire::family_message(attrs, kFamilyQuery, m))
    m.family = Family{.id = f->id, .config_group = f->group};
}

void decode_command(std::span<const uint8_t> attrs, Message& m) {
  if (m.command == DEVLINK_CMD_HEALTH_REPORTER_GET ||
      m.command == DEVLINK_CMD_HEALTH_REPORTER_RECOVER) {
    decode_reporter(attrs, m);
  }
  if (m.command == DEVLINK_CMD_NEW || m.command == DEVLINK_CMD_DEL ||
      m.command == DEVLINK_CMD_PORT_NEW || m.command == DEVLINK_CMD_PORT_DEL) {
    decode_object(attrs, m);
  }
}

}  // namespace

void decode(std::span<const uint8_t> datagram, uint16_t devlink_family, std::vector<Message>& out) {
  netlink_wire::decode_messages(datagram, out, [&](std::span<const uint8_t> payload, Message& m) {
    netlink_wire::decode_genl(payload, devlink_family, m, decode_family, decode_command);
  });
}

std::vector<uint8_t> family_request(uint32_t seq) {
  return netlink_wire::family_request(kFamilyName, seq, 0);
}

namespace {
std::vector<uint8_t> dump_request(uint16_t devlink_family, uint32_t seq, uint8_t command) {
  std::vector<uint8_t> out = netlink_wire::genl_request(devlink_family, NLM_F_REQUEST | NLM_F_DUMP,
                                                        seq, 0, command, DEVLINK_GENL_VERSION);
  netlink_wire::finish(out);
  return out;
}
}  // namespace

std::vector<uint8_t> reporter_dump_request(uint16_t devlink_family, uint32_t seq) {
  return dump_request(devlink_family, seq, DEVLINK_CMD_HEALTH_REPORTER_GET);
}

std::vector<uint8_t> port_dump_request(uint16_t devlink_family, uint32_t seq) {
  return dump_request(devlink_family, seq, DEVLINK_CMD_PORT_GET);
}

}  // namespace rdma_eventd::daemon::devlink
