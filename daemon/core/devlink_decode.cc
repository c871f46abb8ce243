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
constexpr size_t kGenlHeader = GENL_HDRLEN;  // 4

bool str(const Attr& a, std::string& out, std::string_view what, std::string& problem) {
  return netlink_wire::string_attr(a, out, what, kMaxNameLength, problem);
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

void decode_reporter(std::span<const uint8_t> attrs, Message& m) {
  Reporter r;
  bool nest = false;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    switch (a.type) {
      case DEVLINK_ATTR_BUS_NAME:
        return str(a, r.bus, "bus name", m.problem);
      case DEVLINK_ATTR_DEV_NAME:
        return str(a, r.device, "device name", m.problem);
      case DEVLINK_ATTR_PORT_INDEX: {
        uint32_t index = 0;
        if (!num(a, index, "port index", m.problem)) return false;
        r.port_index = index;
        return true;
      }
      case DEVLINK_ATTR_HEALTH_REPORTER:
        nest = true;
        return decode_reporter_nest(a.payload, r, m.problem);
      default:
        return true;
    }
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

void decode_family(std::span<const uint8_t> attrs, Message& m) {
  Family f;
  std::string name;
  bool has_id = false;
  const bool framed = for_each_attr(attrs, m.problem, [&](const Attr& a) {
    switch (a.type) {
      case CTRL_ATTR_FAMILY_ID:
        has_id = true;
        return num(a, f.id, "family id", m.problem);
      case CTRL_ATTR_FAMILY_NAME:
        return str(a, name, "family name", m.problem);
      case CTRL_ATTR_MCAST_GROUPS:
        // An array: each entry a nest of a name and an id.
        return for_each_attr(a.payload, m.problem, [&](const Attr& group) {
          std::string group_name;
          uint32_t id = 0;
          if (!for_each_attr(group.payload, m.problem, [&](const Attr& g) {
                if (g.type == CTRL_ATTR_MCAST_GRP_NAME)
                  return str(g, group_name, "group name", m.problem);
                if (g.type == CTRL_ATTR_MCAST_GRP_ID) return num(g, id, "group id", m.problem);
                return true;
              })) {
            return false;
          }
          if (group_name == kConfigGroupName) f.config_group = id;
          return true;
        });
      default:
        return true;
    }
  });
  if (!framed) {
    m.kind = MessageKind::kMalformed;
    return;
  }
  if (!has_id || name != kFamilyName) {
    m.kind = MessageKind::kMalformed;
    m.problem = has_id ? "the family is \"" + name + "\", not devlink" : "no family id";
    return;
  }
  m.kind = MessageKind::kFamily;
  m.family = f;
}

void decode_one(std::span<const uint8_t> payload, uint16_t devlink_family, Message& m) {
  const bool controller = m.type == GENL_ID_CTRL;
  const bool devlink = devlink_family != 0 && m.type == devlink_family;
  if (!controller && !devlink) return;  // another family's: not ours to read
  if (payload.size() < kGenlHeader) {
    m.kind = MessageKind::kMalformed;
    m.problem = "no generic netlink header";
    return;
  }
  m.command = payload[0];
  const auto attrs = payload.subspan(kGenlHeader);
  if (controller) {
    if (m.command == CTRL_CMD_NEWFAMILY) decode_family(attrs, m);
    return;
  }
  if (m.command == DEVLINK_CMD_HEALTH_REPORTER_GET ||
      m.command == DEVLINK_CMD_HEALTH_REPORTER_RECOVER) {
    decode_reporter(attrs, m);
  }
}

std::vector<uint8_t> request(uint16_t type, uint16_t flags, uint32_t seq, uint8_t command,
                             uint8_t version) {
  std::vector<uint8_t> out = netlink_wire::message_header(type, flags, seq);
  out.push_back(command);
  out.push_back(version);
  out.resize(out.size() + 2, 0);  // genlmsghdr.reserved
  return out;
}

}  // namespace

void decode(std::span<const uint8_t> datagram, uint16_t devlink_family, std::vector<Message>& out) {
  netlink_wire::decode_messages(datagram, out, [&](std::span<const uint8_t> payload, Message& m) {
    decode_one(payload, devlink_family, m);
  });
}

std::vector<uint8_t> family_request(uint32_t seq) {
  std::vector<uint8_t> out = request(GENL_ID_CTRL, NLM_F_REQUEST, seq, CTRL_CMD_GETFAMILY, 1);
  const std::string name(kFamilyName);
  netlink_wire::put_attr(out, CTRL_ATTR_FAMILY_NAME, name.c_str(), name.size() + 1);
  netlink_wire::finish(out);
  return out;
}

std::vector<uint8_t> reporter_dump_request(uint16_t devlink_family, uint32_t seq) {
  std::vector<uint8_t> out = request(devlink_family, NLM_F_REQUEST | NLM_F_DUMP, seq,
                                     DEVLINK_CMD_HEALTH_REPORTER_GET, DEVLINK_GENL_VERSION);
  netlink_wire::finish(out);
  return out;
}

}  // namespace rdma_eventd::daemon::devlink
