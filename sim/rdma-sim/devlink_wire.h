// The generic-netlink bytes of the devlink stand-in, as Linux 6.1 builds them
// (docs/simulator.md, "devlink health"): the controller's NEWFAMILY answer (ctrl_fill_info in
// net/netlink/genetlink.c), a health reporter (devlink_nl_health_reporter_fill), an instance
// (devlink_nl_fill) and a port (devlink_nl_port_fill), NLMSG_DONE and
// NLMSG_ERROR (netlink_dump, netlink_ack in net/netlink/af_netlink.c). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "devlink_health.h"
#include "netlink_wire.h"

namespace rdmasim::devlink_wire {

// The ids the stand-in's kernel gave: a real kernel assigns both at boot (the family from
// GENL_START_ALLOC 0x13 up, the group from 2 up), so programs resolve them by name.
inline constexpr uint16_t kFamilyId = 0x14;
inline constexpr uint32_t kConfigGroup = 2;

// The largest first part of a dump (NLMSG_GOODSIZE with 4 KiB pages: the dump starts within
// the request, before the reader has told its buffer size) and of the later ones (netlink
// caps the reader's buffer at 32 KiB).
inline constexpr size_t kFirstDumpPart = 3776;
inline constexpr size_t kDumpPart = 32768;

using netlink_wire::Header;
using netlink_wire::put_done;
using netlink_wire::put_error;
using netlink_wire::read_header;

// The generic-netlink command and the NUL-terminated string attribute `type` of a request
// (its first level); "" when absent.
uint8_t genl_command(std::span<const uint8_t> message);
std::string string_attr(std::span<const uint8_t> message, uint16_t type);
bool u16_attr(std::span<const uint8_t> message, uint16_t type, uint16_t* value);

// Appends one message to `out`.
void put_family(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq, uint16_t flags);
void put_reporter(std::vector<uint8_t>& out, const DevlinkFill& f, uint8_t command, uint32_t pid,
                  uint32_t seq, uint16_t flags, bool pad_u64);
// An instance (devlink_nl_fill: the handle, RELOAD_FAILED, DEV_STATS) or, when o.port is set, a
// port (devlink_nl_port_fill), with o.command.
void put_object(std::vector<uint8_t>& out, const DevlinkObject& o, uint32_t pid, uint32_t seq,
                uint16_t flags, bool pad_u64);

}  // namespace rdmasim::devlink_wire
