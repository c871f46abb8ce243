// Plain netlink bytes shared by the simulator's kernel stand-ins (devlink_wire.h,
// rdma_netlink_wire.h): the message header, attributes, NLMSG_DONE and NLMSG_ERROR as
// net/netlink/af_netlink.c builds them (netlink_dump, netlink_ack). Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace rdmasim::netlink_wire {

constexpr size_t align4(size_t n) {
  return (n + 3) & ~size_t{3};
}

struct Header {
  uint32_t len = 0;
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t seq = 0;
  uint32_t pid = 0;
};

// The first message of bytes at `at`; false when fewer than a header's bytes are left or its
// length does not fit.
bool read_header(std::span<const uint8_t> bytes, size_t at, Header* h);
// netlink_rcv_skb: each message of a datagram in turn (4-aligned); a length that does not fit
// ends the datagram.
void for_each_message(std::span<const uint8_t> datagram,
                      const std::function<void(std::span<const uint8_t>)>& visit);

// Appends a header (its length filled by end_message); returns where it starts.
size_t begin_message(std::vector<uint8_t>& out, uint16_t type, uint16_t flags, uint32_t seq,
                     uint32_t pid);
void end_message(std::vector<uint8_t>& out, size_t at);

// One attribute, padded to 4 bytes.
void put_attr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t size);
// NUL-terminated, as nla_put_string.
void put_string(std::vector<uint8_t>& out, uint16_t type, const std::string& s);
template <typename T>
void put_num(std::vector<uint8_t>& out, uint16_t type, T v) {
  put_attr(out, type, &v, sizeof v);
}
// A nest's attribute, its length filled by end_nest.
size_t begin_nest(std::vector<uint8_t>& out, uint16_t type);
void end_nest(std::vector<uint8_t>& out, size_t at);

// Appends one message to `out`.
void put_done(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq);
// NLMSG_ERROR for `request` (error 0: an acknowledgement, which carries only its header).
void put_error(std::vector<uint8_t>& out, uint32_t pid, std::span<const uint8_t> request,
               int error);

}  // namespace rdmasim::netlink_wire
