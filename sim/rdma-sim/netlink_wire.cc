#include "netlink_wire.h"

#include <linux/netlink.h>

#include <algorithm>
#include <cstring>

namespace rdmasim::netlink_wire {

bool read_header(std::span<const uint8_t> bytes, size_t at, Header* h) {
  if (at > bytes.size() || bytes.size() - at < sizeof(nlmsghdr)) return false;
  nlmsghdr n;
  std::memcpy(&n, bytes.data() + at, sizeof n);
  if (n.nlmsg_len < sizeof(nlmsghdr) || n.nlmsg_len > bytes.size() - at) return false;
  *h = Header{n.nlmsg_len, n.nlmsg_type, n.nlmsg_flags, n.nlmsg_seq, n.nlmsg_pid};
  return true;
}

void for_each_message(std::span<const uint8_t> datagram,
                      const std::function<void(std::span<const uint8_t>)>& visit) {
  size_t at = 0;
  Header h;
  while (read_header(datagram, at, &h)) {
    visit(datagram.subspan(at, h.len));
    at += align4(h.len);
  }
}

size_t begin_message(std::vector<uint8_t>& out, uint16_t type, uint16_t flags, uint32_t seq,
                     uint32_t pid) {
  const size_t at = out.size();
  out.resize(at + sizeof(nlmsghdr), 0);
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  h.nlmsg_pid = pid;
  std::memcpy(out.data() + at, &h, sizeof h);
  return at;
}

void end_message(std::vector<uint8_t>& out, size_t at) {
  const auto len = static_cast<uint32_t>(out.size() - at);
  std::memcpy(out.data() + at, &len, sizeof len);
}

void put_attr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t size) {
  const auto len = static_cast<uint16_t>(sizeof(nlattr) + size);
  const size_t at = out.size();
  out.resize(at + align4(len), 0);
  std::memcpy(out.data() + at, &len, 2);
  std::memcpy(out.data() + at + 2, &type, 2);
  if (size) std::memcpy(out.data() + at + sizeof(nlattr), data, size);
}

void put_string(std::vector<uint8_t>& out, uint16_t type, const std::string& s) {
  put_attr(out, type, s.c_str(), s.size() + 1);
}

size_t begin_nest(std::vector<uint8_t>& out, uint16_t type) {
  const size_t at = out.size();
  put_attr(out, type, nullptr, 0);
  return at;
}

void end_nest(std::vector<uint8_t>& out, size_t at) {
  const auto len = static_cast<uint16_t>(out.size() - at);
  std::memcpy(out.data() + at, &len, 2);
}

void put_done(std::vector<uint8_t>& out, uint32_t pid, uint32_t seq) {
  const size_t at = begin_message(out, NLMSG_DONE, NLM_F_MULTI, seq, pid);
  const int32_t done_errno = 0;
  out.resize(out.size() + sizeof done_errno, 0);
  std::memcpy(out.data() + out.size() - sizeof done_errno, &done_errno, sizeof done_errno);
  end_message(out, at);
}

void put_error(std::vector<uint8_t>& out, uint32_t pid, std::span<const uint8_t> request,
               int error) {
  nlmsghdr req{};
  if (request.size() >= sizeof req) std::memcpy(&req, request.data(), sizeof req);
  // An error carries the whole request (no NETLINK_CAP_ACK); an acknowledgement its header.
  const uint16_t flags = error ? 0 : NLM_F_CAPPED;
  const size_t at = begin_message(out, NLMSG_ERROR, flags, req.nlmsg_seq, pid);
  const int32_t e = -error;
  const size_t body = out.size();
  const size_t copied = error ? request.size() : sizeof req;
  out.resize(body + sizeof e + copied, 0);
  std::memcpy(out.data() + body, &e, sizeof e);
  std::memcpy(out.data() + body + sizeof e, request.data(), std::min(copied, request.size()));
  end_message(out, at);
  out.resize(align4(out.size()), 0);
}

}  // namespace rdmasim::netlink_wire
