#include "devlink_wire.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstring>

namespace rdmasim::devlink_wire {
namespace {

using namespace netlink_wire;

void put_genl(std::vector<uint8_t>& out, uint8_t cmd, uint8_t version) {
  out.push_back(cmd);
  out.push_back(version);
  out.push_back(0);
  out.push_back(0);
}

// nla_put_u64_64bit: where unaligned access is slow, a PAD attribute first when the tail is
// 8-aligned, so that the value is. Offsets count from the datagram's start (an skb's data is
// 8-aligned).
void put_u64(std::vector<uint8_t>& out, uint16_t type, uint64_t v, bool pad) {
  if (pad && out.size() % 8 == 0) put_attr(out, DEVLINK_ATTR_PAD, nullptr, 0);
  put_num(out, type, v);
}

// Walks the first level of a generic-netlink request's attributes.
template <typename Visit>
void for_each_attr(std::span<const uint8_t> message, Visit visit) {
  size_t at = sizeof(nlmsghdr) + GENL_HDRLEN;
  while (at + sizeof(nlattr) <= message.size()) {
    uint16_t len, type;
    std::memcpy(&len, message.data() + at, 2);
    std::memcpy(&type, message.data() + at + 2, 2);
    if (len < sizeof(nlattr) || len > message.size() - at) return;
    if (visit(static_cast<uint16_t>(type & NLA_TYPE_MASK),
              message.subspan(at + sizeof(nlattr), len - sizeof(nlattr))))
      return;
    at += align4(len);
  }
}

}  // namespace

uint8_t genl_command(std::span<const uint8_t> message) {
  return message.size() >= sizeof(nlmsghdr) + GENL_HDRLEN ? message[sizeof(nlmsghdr)] : 0;
}

std::string string_attr(std::span<const uint8_t> message, uint16_t type) {
  std::string out;
  for_each_attr(message, [&](uint16_t t, std::span<const uint8_t> payload) {
    if (t != type) return false;
    const auto* p = reinterpret_cast<const char*>(payload.data());
    out.assign(p, strnlen(p, payload.size()));
    return true;
  });
  return out;
}

bool u16_attr(std::span<const uint8_t> message, uint16_t type, uint16_t* value) {
  bool found = false;
  for_each_attr(message, [&](uint16_t t, std::span<const uint8_t> payload) {
    if (t != type || payload.size() < 2) return false;
    std::memcpy(value, payload.data(), 2);
    found = true;
    return true;
  });
  return found;
}

void put_family(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq, uint16_t flags) {
  const size_t at = begin_message(out, GENL_ID_CTRL, flags, seq, pid);
  put_genl(out, CTRL_CMD_NEWFAMILY, 2);  // the controller's family version
  put_string(out, CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME);
  put_num<uint16_t>(out, CTRL_ATTR_FAMILY_ID, kFamilyId);
  put_num<uint32_t>(out, CTRL_ATTR_VERSION, DEVLINK_GENL_VERSION);
  put_num<uint32_t>(out, CTRL_ATTR_HDRSIZE, 0);
  put_num<uint32_t>(out, CTRL_ATTR_MAXATTR, DEVLINK_ATTR_MAX);
  // CTRL_ATTR_OPS (every devlink command and its flags) comes here in the kernel's answer;
  // the stand-in leaves it out (docs/simulator.md).
  const size_t groups = begin_nest(out, CTRL_ATTR_MCAST_GROUPS);
  const size_t group = begin_nest(out, 1);
  put_num<uint32_t>(out, CTRL_ATTR_MCAST_GRP_ID, kConfigGroup);
  put_string(out, CTRL_ATTR_MCAST_GRP_NAME, DEVLINK_GENL_MCGRP_CONFIG_NAME);
  end_nest(out, group);
  end_nest(out, groups);
  end_message(out, at);
}

void put_reporter(std::vector<uint8_t>& out, const DevlinkFill& f, uint8_t command, uint32_t pid,
                  uint32_t seq, uint16_t flags, bool pad) {
  const DevlinkReporter& r = f.reporter;
  const size_t at = begin_message(out, kFamilyId, flags, seq, pid);
  put_genl(out, command, DEVLINK_GENL_VERSION);
  put_string(out, DEVLINK_ATTR_BUS_NAME, f.bus);
  put_string(out, DEVLINK_ATTR_DEV_NAME, f.device);
  if (r.spec.port_index >= 0)
    put_num<uint32_t>(out, DEVLINK_ATTR_PORT_INDEX, static_cast<uint32_t>(r.spec.port_index));
  const size_t nest = begin_nest(out, DEVLINK_ATTR_HEALTH_REPORTER);
  put_string(out, DEVLINK_ATTR_HEALTH_REPORTER_NAME, r.spec.name);
  put_num<uint8_t>(out, DEVLINK_ATTR_HEALTH_REPORTER_STATE, r.state);
  put_u64(out, DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, r.error_count, pad);
  put_u64(out, DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, r.recovery_count, pad);
  if (r.spec.recover) {
    put_u64(out, DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, r.spec.grace_period_ms, pad);
    put_num<uint8_t>(out, DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, r.auto_recover ? 1 : 0);
  }
  if (r.dumped) {
    put_u64(out, DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS, r.dump_ts_ms, pad);
    put_u64(out, DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS, r.dump_real_ns, pad);
  }
  if (r.spec.dump)
    put_num<uint8_t>(out, DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, r.auto_dump ? 1 : 0);
  end_nest(out, nest);
  end_message(out, at);
}

namespace {

// devlink_reload_stats_put: for each reload action (the ops' own, or every one for the remote
// stats), its limits (unspecified always, no_reset where allowed; driver_reinit with no_reset is
// no valid combination), each with the count of reloads done: none here.
// Every nest of devlink_nl_fill is nla_nest_start's: NLA_F_NESTED set.
size_t nest(std::vector<uint8_t>& out, uint16_t type) {
  return begin_nest(out, type | NLA_F_NESTED);
}

void put_reload_stats(std::vector<uint8_t>& out, uint16_t type, uint8_t actions, bool no_reset) {
  const size_t stats = nest(out, type);
  for (uint8_t action = DEVLINK_RELOAD_ACTION_DRIVER_REINIT;
       action <= DEVLINK_RELOAD_ACTION_FW_ACTIVATE; ++action) {
    if (!(actions & (1 << action))) continue;
    const size_t info = nest(out, DEVLINK_ATTR_RELOAD_ACTION_INFO);
    put_num<uint8_t>(out, DEVLINK_ATTR_RELOAD_ACTION, action);
    const size_t action_stats = nest(out, DEVLINK_ATTR_RELOAD_ACTION_STATS);
    for (uint8_t limit = DEVLINK_RELOAD_LIMIT_UNSPEC; limit <= DEVLINK_RELOAD_LIMIT_NO_RESET;
         ++limit) {
      if (limit == DEVLINK_RELOAD_LIMIT_NO_RESET &&
          (!no_reset || action == DEVLINK_RELOAD_ACTION_DRIVER_REINIT))
        continue;
      const size_t entry = nest(out, DEVLINK_ATTR_RELOAD_STATS_ENTRY);
      put_num<uint8_t>(out, DEVLINK_ATTR_RELOAD_STATS_LIMIT, limit);
      put_num<uint32_t>(out, DEVLINK_ATTR_RELOAD_STATS_VALUE, 0);
      end_nest(out, entry);
    }
    end_nest(out, action_stats);
    end_nest(out, info);
  }
  end_nest(out, stats);
}

}  // namespace

void put_object(std::vector<uint8_t>& out, const DevlinkObject& o, uint32_t pid, uint32_t seq,
                uint16_t flags, bool /*pad_u64*/) {
  const size_t at = begin_message(out, kFamilyId, flags, seq, pid);
  put_genl(out, o.command, DEVLINK_GENL_VERSION);
  put_string(out, DEVLINK_ATTR_BUS_NAME, o.bus);
  put_string(out, DEVLINK_ATTR_DEV_NAME, o.device);
  if (const auto& p = o.port) {
    put_num<uint32_t>(out, DEVLINK_ATTR_PORT_INDEX, p->index);
    put_num<uint16_t>(out, DEVLINK_ATTR_PORT_TYPE, p->type);
    if (p->type == DEVLINK_PORT_TYPE_ETH && !p->netdev.empty()) {
      put_num<uint32_t>(out, DEVLINK_ATTR_PORT_NETDEV_IFINDEX, p->ifindex);
      put_string(out, DEVLINK_ATTR_PORT_NETDEV_NAME, p->netdev);
    }
    // devlink_nl_port_attrs_put: no lanes, not splittable, the flavour, a physical port's number.
    put_num<uint8_t>(out, DEVLINK_ATTR_PORT_SPLITTABLE, 0);
    put_num<uint16_t>(out, DEVLINK_ATTR_PORT_FLAVOUR, p->flavour);
    put_num<uint32_t>(out, DEVLINK_ATTR_PORT_NUMBER, p->number);
  } else {
    put_num<uint8_t>(out, DEVLINK_ATTR_RELOAD_FAILED, 0);
    const size_t stats = nest(out, DEVLINK_ATTR_DEV_STATS);
    put_reload_stats(out, DEVLINK_ATTR_RELOAD_STATS, o.reload_actions, o.reload_no_reset);
    // Remote reloads: every action and limit, whatever the ops have.
    put_reload_stats(
        out, DEVLINK_ATTR_REMOTE_RELOAD_STATS,
        (1 << DEVLINK_RELOAD_ACTION_DRIVER_REINIT) | (1 << DEVLINK_RELOAD_ACTION_FW_ACTIVATE),
        true);
    end_nest(out, stats);
  }
  end_message(out, at);
}

}  // namespace rdmasim::devlink_wire
