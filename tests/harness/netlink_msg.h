// A netlink message written out field by field in a test, as the kernel lays it out: header,
// (generic-netlink header,) attributes, nests. The simulator's tests compare a stand-in's bytes
// with it; the decoders' unit tests feed it to them, hostile attributes included (attr()).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace simtest {

// The kernel's message layout, spelled out: header, genetlink header, attributes.
class Msg {
 public:
  using Bytes = std::vector<uint8_t>;

  explicit Msg(uint16_t type, uint16_t flags = 0, uint32_t seq = 0, uint32_t pid = 0) {
    put32(0), put16(type), put16(flags), put32(seq), put32(pid);
  }
  Msg& genl(uint8_t cmd, uint8_t version) {
    b_.insert(b_.end(), {cmd, version, 0, 0});
    return *this;
  }
  // Any attribute: `size` bytes of `data`, padded to 4.
  Msg& attr(uint16_t type, const void* data, size_t size) {
    put16(uint16_t(4 + size)), put16(type);
    const auto* p = static_cast<const uint8_t*>(data);
    if (size) b_.insert(b_.end(), p, p + size);
    b_.resize((b_.size() + 3) & ~size_t{3}, 0);
    return *this;
  }
  Msg& str(uint16_t type, const std::string& s) { return attr(type, s.c_str(), s.size() + 1); }
  Msg& u8(uint16_t type, uint8_t v) { return attr(type, &v, 1); }
  Msg& u16(uint16_t type, uint16_t v) { return attr(type, &v, 2); }
  Msg& u32(uint16_t type, uint32_t v) { return attr(type, &v, 4); }
  Msg& u64(uint16_t type, uint64_t v) { return attr(type, &v, 8); }
  Msg& nest(uint16_t type) {
    nests_.push_back(b_.size());
    return attr(type, nullptr, 0);
  }
  Msg& end() {
    const auto len = static_cast<uint16_t>(b_.size() - nests_.back());
    std::memcpy(&b_[nests_.back()], &len, 2);
    nests_.pop_back();
    return *this;
  }
  Bytes done() {
    const auto len = static_cast<uint32_t>(b_.size());
    std::memcpy(b_.data(), &len, 4);
    return b_;
  }

 private:
  void put16(uint16_t v) { b_.insert(b_.end(), {uint8_t(v), uint8_t(v >> 8)}); }
  void put32(uint32_t v) { put16(uint16_t(v)), put16(uint16_t(v >> 16)); }
  Bytes b_;
  std::vector<size_t> nests_;
};

// The port id in a message's header.
inline uint32_t pid_of(const std::vector<uint8_t>& d) {
  uint32_t pid = 0;
  if (d.size() >= 16) std::memcpy(&pid, d.data() + 12, 4);
  return pid;
}

// NLMSG_ERROR as netlink_ack builds it for `request`: an error carries the whole request, an
// acknowledgement (error 0) only its header and NLM_F_CAPPED.
inline std::vector<uint8_t> error_message(uint32_t pid, const std::vector<uint8_t>& request,
                                          int error) {
  uint32_t seq;
  std::memcpy(&seq, request.data() + 8, 4);
  std::vector<uint8_t> b =
      Msg(2 /* NLMSG_ERROR */, error ? 0 : 0x100 /* NLM_F_CAPPED */, seq, pid).done();
  const int32_t e = -error;
  b.insert(b.end(), reinterpret_cast<const uint8_t*>(&e), reinterpret_cast<const uint8_t*>(&e) + 4);
  b.insert(b.end(), request.begin(), request.begin() + (error ? request.size() : 16));
  // nlmsg_len counts the copied request as it was; the datagram ends 4-aligned.
  const auto len = static_cast<uint32_t>(b.size());
  std::memcpy(b.data(), &len, 4);
  b.resize((b.size() + 3) & ~size_t{3}, 0);
  return b;
}

}  // namespace simtest
