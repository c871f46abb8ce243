// Netlink framing, shared by the decoders of the netlink families the daemon reads (devlink and
// ethtool over NETLINK_GENERIC, the RDMA monitor over NETLINK_RDMA): pure, so that every byte a
// socket hands over is checked in one place. Layouts are the kernel's uapi (<linux/netlink.h>,
// <linux/genetlink.h>).
//
// A datagram holds one or more messages. A message whose length does not fit ends the datagram
// (the rest cannot be framed); an attribute whose length does not fit ends its message.
#pragma once

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
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

// Remembers which attribute types of one nest were taken, so that a repeated one is skipped
// (the first counts) whatever it holds. Types above 63 are not remembered: none is decoded.
class Seen {
 public:
  bool first(uint16_t type) {
    if (type >= 64) return true;
    const uint64_t bit = uint64_t{1} << type;
    const bool fresh = !(seen_ & bit);
    seen_ |= bit;
    return fresh;
  }

 private:
  uint64_t seen_ = 0;
};

// A NUL-terminated string attribute of 1 to max_length bytes.
bool string_attr(const Attr& a, std::string& out, std::string_view what, size_t max_length,
                 std::string& problem);

// A device, netdev or reporter name as the kernel allows it: a string_attr with no '/', no
// whitespace or control character (dev_valid_name(); ib_device_rename() and devlink's names take
// the same). Anything else did not come from it, and would reach the log as it is.
bool name_attr(const Attr& a, std::string& out, std::string_view what, size_t max_length,
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

// Generic netlink: a family is resolved by name through the controller (GENL_ID_CTRL), whose
// CTRL_CMD_NEWFAMILY answer gives its id and multicast groups.

// Which of an attribute that comes twice counts: the last, as nla_parse keeps it, or the first.
enum class Repeated : uint8_t { kLastCounts, kFirstCounts };

// The family a decoder resolves, and how it reads the controller's answer about it.
struct FamilyQuery {
  std::string_view name;        // the family's name, which the answer must carry
  std::string_view group_name;  // the multicast group whose id is wanted
  size_t max_name_length;       // the longest family or group name taken
  Repeated repeated;            // of the answer's attributes, and of groups of that name
};

struct GenlFamily {
  uint16_t id = 0;
  uint32_t group = 0;  // 0: the family has no group of that name
};

// Decodes CTRL_CMD_NEWFAMILY's attributes. False, *problem saying why, when they are malformed,
// carry no id, or name another family.
bool decode_family(std::span<const uint8_t> attrs, const FamilyQuery& query, GenlFamily& family,
                   std::string& problem);

// Decodes CTRL_CMD_NEWFAMILY's attributes into `m`: kFamily with the family, or kMalformed.
template <typename Message>
std::optional<GenlFamily> family_message(std::span<const uint8_t> attrs, const FamilyQuery& query,
                                         Message& m) {
  GenlFamily f;
  if (!decode_family(attrs, query, f, m.problem)) {
    m.kind = decltype(m.kind)::kMalformed;
    return std::nullopt;
  }
  m.kind = decltype(m.kind)::kFamily;
  return f;
}

// Decodes a generic netlink message's payload, of the controller or of the family whose id is
// `family_id` (0 before it is known: then only the controller's). Another family's is left as it
// is (kIgnored). The controller's CTRL_CMD_NEWFAMILY goes to on_family(attrs, m), the family's
// messages to on_command(attrs, m), m.command set; a payload without a genlmsghdr is kMalformed.
template <typename Message, typename OnFamily, typename OnCommand>
void decode_genl(std::span<const uint8_t> payload, uint16_t family_id, Message& m,
                 OnFamily on_family, OnCommand on_command) {
  const bool controller = m.type == GENL_ID_CTRL;
  const bool ours = family_id != 0 && m.type == family_id;
  if (!controller && !ours) return;  // another family's: not ours to read
  if (payload.size() < GENL_HDRLEN) {
    m.kind = decltype(m.kind)::kMalformed;
    m.problem = "no generic netlink header";
    return;
  }
  m.command = payload[0];
  const auto attrs = payload.subspan(GENL_HDRLEN);
  if (!controller) {
    on_command(attrs, m);
  } else if (m.command == CTRL_CMD_NEWFAMILY) {
    on_family(attrs, m);
  }
}

// Appends an attribute, padded to 4 bytes.
void put_attr(std::vector<uint8_t>& out, uint16_t type, const void* data, size_t size);
// A request's header (its length set by finish()).
std::vector<uint8_t> message_header(uint16_t type, uint16_t flags, uint32_t seq);
// Sets the message's length to its size.
void finish(std::vector<uint8_t>& message);
// A generic netlink request's header and genlmsghdr, from the sender's netlink port id
// `port_id` (its length set by finish()).
std::vector<uint8_t> genl_request(uint16_t type, uint16_t flags, uint32_t seq, uint32_t port_id,
                                  uint8_t command, uint8_t version);
// CTRL_CMD_GETFAMILY for the family named `name`, with NLM_F_REQUEST alone: the controller's
// answer (or an error) replies to it.
std::vector<uint8_t> family_request(std::string_view name, uint32_t seq, uint32_t port_id);

}  // namespace rdma_eventd::daemon::netlink_wire
