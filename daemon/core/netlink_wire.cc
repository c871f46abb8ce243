#include "core/netlink_wire.h"

namespace rdma_eventd::daemon::netlink_wire {

bool string_attr(const Attr& a, std::string& out, std::string_view what, size_t max_length,
                 std::string& problem) {
  const auto* p = reinterpret_cast<const char*>(a.payload.data());
  const size_t n = strnlen(p, a.payload.size());
  if (n == a.payload.size()) {
    problem = std::string(what) + " is not NUL-terminated";
    return false;
  }
  if (n == 0 || n > max_length) {
    problem = std::string(what) + " has length " + std::to_string(n);
    return false;
  }
  out.assign(p, n);
  return true;
}

bool error_code(std::span<const uint8_t> payload, int& error, std::string& problem) {
  if (payload.size() < sizeof(int32_t)) {
    problem = "error message of " + std::to_string(payload.size()) + " bytes";
    return false;
  }
  // The kernel sends 0 (an acknowledgement) or -errno, and errno is at most 4095 (MAX_ERRNO).
  // Anything else did not come from it, and negating INT32_MIN would not even be a number.
  const auto code = load<int32_t>(payload.data());
  if (code > 0 || code < -kMaxErrno) {
    problem = "error code " + std::to_string(code) + " is not -errno";
    return false;
  }
  error = -code;
  return true;
}

void put_attr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t size) {
  const auto len = static_cast<uint16_t>(kAttrHeader + size);
  const size_t at = out.size();
  out.resize(at + align4(len), 0);
  std::memcpy(out.data() + at, &len, 2);
  std::memcpy(out.data() + at + 2, &type, 2);
  if (size) std::memcpy(out.data() + at + kAttrHeader, data, size);
}

std::vector<uint8_t> message_header(uint16_t type, uint16_t flags, uint32_t seq) {
  std::vector<uint8_t> out(kHeader, 0);
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

void finish(std::vector<uint8_t>& message) {
  const auto len = static_cast<uint32_t>(message.size());
  std::memcpy(message.data(), &len, sizeof len);
}

}  // namespace rdma_eventd::daemon::netlink_wire
