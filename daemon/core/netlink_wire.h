// Netlink framing, shared by the decoders of the netlink families the daemon reads (devlink
// over NETLINK_GENERIC, the RDMA monitor over NETLINK_RDMA): pure, so that every byte a socket
// hands over is checked in one place. Layouts are the kernel's uapi (<linux/netlink.h>).
//
// A datagram holds one or more messages. A message whose length does not fit ends the datagram
// (the rest cannot be framed); an attribute whose length does not fit ends its message.
#pragma once

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon::netlink_wire {

inline constexpr size_t kHeader = sizeof(nlmsghdr);    // 16
inline constexpr size_t kAttrHeader = sizeof(nlattr);  // 4
inline constexpr int32_t kMaxErrno = 4095;             // include/linux/err.h

constexpr size_t align4(size_t n) {
  return (n + 3) & ~size_t{3};
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the bytes may sit anywhere: no aligned access
  return v;
}

// One attribute: its type (flags masked off) and payload.
struct Attr {
  uint16_t type = 0;
  std::span<const uint8_t> payload;
};

// Walks the attributes of `bytes`, calling visit(const Attr&) -> bool (false: stop, *problem
// says why). A length that does not fit sets *problem and stops. Returns whether every
// attribute was visited.
template <typename Visit>
bool for_each_attr(std::span<const uint8_t> bytes, std::string& problem, Visit visit) {
  size_t at = 0;
  while (at + kAttrHeader <= bytes.size()) {
    const auto len = load<uint16_t>(bytes.data() + at);
    const auto type = load<uint16_t>(bytes.data() + at + 2);
    if (len < kAttrHeader || len > bytes.size() - at) {
      problem = "attribute " + std::to_string(type & NLA_TYPE_MASK) + " has length " +
                std::to_string(len) + ", " + std::to_string(bytes.size() - at) + " bytes left";
      return false;
    }
    if (!visit(Attr{static_cast<uint16_t>(type & NLA_TYPE_MASK),
                    bytes.subspan(at + kAttrHeader, len - kAttrHeader)})) {
      return false;
    }
    at += align4(len);
  }
  // Fewer bytes than an attribute header at the end: padding at most.
  return true;
}

// A NUL-terminated string attribute of 1 to max_length bytes.
bool string_attr(const Attr& a, std::string& out, std::string_view what, size_t max_length,
                 std::string& problem);

template <typename T>
bool number_attr(const Attr& a, T& out, std::string_view what, std::string& problem) {
  if (a.payload.size() < sizeof(T)) {
    problem = std::string(what) + " has " + std::to_string(a.payload.size()) + " bytes, needs " +
              std::to_string(sizeof(T));
    return false;
  }
  out = load<T>(a.payload.data());
  return true;
}

// Walks the messages of `datagram`: visit(const nlmsghdr&, std::span<const uint8_t> message)
// for each whole one; bad_length(const nlmsghdr&, std::string problem) for one whose length
// does not fit, which ends the walk.
template <typename Visit, typename BadLength>
void for_each_message(std::span<const uint8_t> datagram, Visit visit, BadLength bad_length) {
  size_t at = 0;
  while (datagram.size() - at >= kHeader) {
    const auto h = load<nlmsghdr>(datagram.data() + at);
    if (h.nlmsg_len < kHeader || h.nlmsg_len > datagram.size() - at) {
      bad_length(h, "message length " + std::to_string(h.nlmsg_len) + ", " +
                        std::to_string(datagram.size() - at) + " bytes left");
      return;
    }
    visit(h, datagram.subspan(at, h.nlmsg_len));
    at += align4(h.nlmsg_len);
    if (at > datagram.size()) return;
  }
}

// The errno of an NLMSG_ERROR's payload: 0 (an acknowledgement) or a positive errno. Anything
// else, or too few bytes, did not come from the kernel: false, *problem says why.
bool error_code(std::span<const uint8_t> payload, int& error, std::string& problem);

// Decodes every message of `datagram` into `out` (a vector of a decoder's Message: type, flags,
// seq, pid, kind, error, problem; its kind has kDone, kOverrun, kError, kIgnored, kMalformed).
// The control messages are decoded here (NLMSG_NOOP is ignored); decode_one(std::span<const
// uint8_t> payload, Message&) gets every other whole message's payload. One whose length does
// not fit is kMalformed and ends the walk.
template <typename Message, typename DecodeOne>
void decode_messages(std::span<const uint8_t> datagram, std::vector<Message>& out,
                     DecodeOne decode_one) {
  const auto add = [&](const nlmsghdr& h) -> Message& {
    Message& m = out.emplace_back();
    m.type = h.nlmsg_type;
    m.flags = h.nlmsg_flags;
    m.seq = h.nlmsg_seq;
    m.pid = h.nlmsg_pid;
    return m;
  };
  for_each_message(
      datagram,
      [&](const nlmsghdr& h, std::span<const uint8_t> msg) {
        Message& m = add(h);
        using Kind = decltype(m.kind);
        const std::span<const uint8_t> payload = msg.subspan(kHeader);
        switch (h.nlmsg_type) {
          case NLMSG_DONE:
            m.kind = Kind::kDone;
            return;
          case NLMSG_OVERRUN:
            m.kind = Kind::kOverrun;
            return;
          case NLMSG_ERROR:
            m.kind = error_code(payload, m.error, m.problem) ? Kind::kError : Kind::kMalformed;
            return;
          case NLMSG_NOOP:
            m.kind = Kind::kIgnored;
            return;
          default:
            decode_one(payload, m);
        }
      },
      [&](const nlmsghdr& h, std::string problem) {
        Message& m = add(h);
        m.kind = decltype(m.kind)::kMalformed;
        m.problem = std::move(problem);
      });
}

// A message that lacks what `missing` names (nullptr when it has all it needs) is kMalformed,
// its problem "no <missing>": true if so.
template <typename Message>
bool malformed_if_missing(Message& m, const char* missing) {
  if (!missing) return false;
  m.kind = decltype(m.kind)::kMalformed;
  m.problem = std::string("no ") + missing;
  return true;
}

// Appends an attribute, padded to 4 bytes.
void put_attr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t size);
// A request's header (its length set by finish()).
std::vector<uint8_t> message_header(uint16_t type, uint16_t flags, uint32_t seq);
// Sets the message's length to its size.
void finish(std::vector<uint8_t>& message);

}  // namespace rdma_eventd::daemon::netlink_wire
