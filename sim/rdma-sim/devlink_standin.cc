#include "devlink_standin.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "devlink_wire.h"
#include "netlink_wire.h"

namespace rdmasim {
namespace {

namespace wire = devlink_wire;

}  // namespace

DevlinkStandIn::DevlinkStandIn(EventLoop& loop, std::string path, const DevlinkHealth& health,
                               bool pad_u64, EthtoolFamily& ethtool)
    : NetlinkStandIn(loop, std::move(path)),
      health_(health),
      pad_u64_(pad_u64),
      ethtool_(ethtool) {}

void DevlinkStandIn::on_message(const Peer& c, std::span<const uint8_t> message) {
  wire::Header h;
  wire::read_header(message, 0, &h);
  // Only requests are taken; control messages (NOOP, DONE, ERROR...) are ignored.
  if (!(h.flags & NLM_F_REQUEST) || h.type < NLMSG_MIN_TYPE) return;
  std::vector<uint8_t> out;
  int error = 0;
  const bool want_ack = h.flags & NLM_F_ACK;
  if (message.size() < sizeof(nlmsghdr) + GENL_HDRLEN) {
    error = EINVAL;
  } else if (h.type == GENL_ID_CTRL) {
    const uint8_t cmd = wire::genl_command(message);
    if (cmd != CTRL_CMD_GETFAMILY) {
      error = EOPNOTSUPP;
    } else if (h.flags & NLM_F_DUMP) {
      // ctrl_dumpfamily: every family; the stand-in's kernel has devlink and ethtool to show
      // (the controller's own entry is left out).
      wire::put_family(out, c.port_id, h.seq, NLM_F_MULTI);
      ethtool_wire::put_family(out, c.port_id, h.seq, NLM_F_MULTI);
      server_.send(c, std::move(out));
      out.clear();
      wire::put_done(out, c.port_id, h.seq);
      server_.send(c, std::move(out));
      return;
    } else {
      uint16_t id = 0;
      const bool by_id = wire::u16_attr(message, CTRL_ATTR_FAMILY_ID, &id);
      const std::string name = wire::string_attr(message, CTRL_ATTR_FAMILY_NAME);
      // ctrl_getfamily: the name wins over the id; neither is EINVAL, an unknown one ENOENT.
      const bool devlink = !name.empty() ? name == DEVLINK_GENL_NAME : id == wire::kFamilyId;
      const bool ethtool = !name.empty() ? name == "ethtool" : id == ethtool_wire::kFamilyId;
      if (name.empty() && !by_id)
        error = EINVAL;
      else if (devlink)
        wire::put_family(out, c.port_id, h.seq, 0);
      else if (ethtool)
        ethtool_wire::put_family(out, c.port_id, h.seq, 0);
      else
        error = ENOENT;
    }
  } else if (h.type == wire::kFamilyId) {
    const bool is_dump = (h.flags & NLM_F_DUMP) == NLM_F_DUMP;
    if (wire::genl_command(message) == DEVLINK_CMD_HEALTH_REPORTER_GET && is_dump) {
      dump(c, h.seq);
      return;  // a dump is never acknowledged
    }
    if (wire::genl_command(message) == DEVLINK_CMD_PORT_GET && is_dump) {
      port_dump(c, h.seq);
      return;
    }
    error = EOPNOTSUPP;
  } else if (h.type == ethtool_wire::kFamilyId) {
    // The reply is a datagram of its own (an skb), the acknowledgement another.
    std::vector<std::vector<uint8_t>> replies;
    error = ethtool_.handle(message, c.port_id, &replies);
    for (std::vector<uint8_t>& d : replies)
      server_.send(c, std::move(d));
    if (!error && (h.flags & NLM_F_DUMP) == NLM_F_DUMP) return;  // a dump is never acknowledged
  } else {
    error = ENOENT;  // genl_rcv_msg: no such family
  }
  if (error || want_ack) wire::put_error(out, c.port_id, message, error);
  if (!out.empty()) server_.send(c, std::move(out));
}

void DevlinkStandIn::dump(const Peer& c, uint32_t seq) {
  ++stats_.dumps;
  std::vector<std::vector<uint8_t>> messages;
  for (const DevlinkFill& f : health_.dump()) {
    messages.emplace_back();
    wire::put_reporter(messages.back(), f, DEVLINK_CMD_HEALTH_REPORTER_GET, c.port_id, seq,
                       NLM_F_MULTI, pad_u64_);
  }
  send_dump(c, seq, messages);
}

void DevlinkStandIn::port_dump(const Peer& c, uint32_t seq) {
  ++stats_.port_dumps;
  // devlink_nl_cmd_port_get_dumpit fills each port with DEVLINK_CMD_NEW, not PORT_NEW, until
  // the 2024 fix "devlink: fix port dump cmd type" (port_dump() gives that command).
  std::vector<std::vector<uint8_t>> messages;
  for (const DevlinkObject& o : health_.port_dump()) {
    messages.emplace_back();
    wire::put_object(messages.back(), o, c.port_id, seq, NLM_F_MULTI, pad_u64_);
  }
  send_dump(c, seq, messages);
}

void DevlinkStandIn::send_dump(const Peer& c, uint32_t seq,
                               const std::vector<std::vector<uint8_t>>& messages) {
  // netlink_dump: each part as full as it gets, then NLMSG_DONE on its own (the last call of
  // the dump function finds nothing more), or in the first part when there is nothing at all.
  std::vector<uint8_t> part;
  size_t limit = wire::kFirstDumpPart;
  for (const std::vector<uint8_t>& msg : messages) {
    if (!part.empty() && part.size() + msg.size() > limit) {
      server_.send(c, std::move(part));
      part.clear();
      limit = wire::kDumpPart;
    }
    part.insert(part.end(), msg.begin(), msg.end());
  }
  if (!part.empty()) server_.send(c, std::move(part));
  std::vector<uint8_t> done;
  wire::put_done(done, c.port_id, seq);
  server_.send(c, std::move(done));
}

void DevlinkStandIn::notify(const DevlinkFill& f) {
  ++stats_.notifications;
  // devlink_recover_notify: a multicast, port id 0 and seq 0.
  std::vector<uint8_t> msg;
  wire::put_reporter(msg, f, DEVLINK_CMD_HEALTH_REPORTER_RECOVER, 0, 0, 0, pad_u64_);
  server_.send_all(msg);
}

void DevlinkStandIn::notify(const DevlinkObject& o) {
  ++stats_.notifications;
  // devlink_notify, devlink_port_notify: a multicast, port id 0 and seq 0.
  std::vector<uint8_t> msg;
  wire::put_object(msg, o, 0, 0, 0, pad_u64_);
  server_.send_all(msg);
}

}  // namespace rdmasim
