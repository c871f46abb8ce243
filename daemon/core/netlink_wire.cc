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

bool name_attr(const Attr& a, std::string& out, std::string_view what, size_t max_length,
               std::string& problem) {
  if (!string_attr(a, out, what, max_length, problem)) return false;
  for (const char c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f || c == '/') {
      problem = std::string(what) + " has a byte a name cannot have";
      return false;
    }
  }
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

bool decode_family(std::span<const uint8_t> attrs, const FamilyQuery& query, GenlFamily& family,
                   std::string& problem) {
  const bool first_counts = query.repeated == Repeated::kFirstCounts;
  GenlFamily f;
  std::string name;
  bool has_id = false;
  Seen seen;
  const auto str = [&](const Attr& a, std::string& out, std::string_view what) {
    return string_attr(a, out, what, query.max_name_length, problem);
  };
  const bool framed = for_each_attr(attrs, problem, [&](const Attr& a) {
    if (first_counts && !seen.first(a.type)) return true;
    switch (a.type) {
      case CTRL_ATTR_FAMILY_ID:
        has_id = true;
        return number_attr(a, f.id, "family id", problem);
      case CTRL_ATTR_FAMILY_NAME:
        return str(a, name, "family name");
      case CTRL_ATTR_MCAST_GROUPS:
        // An array: each entry a nest of a name and an id.
        return for_each_attr(a.payload, problem, [&](const Attr& group) {
          std::string group_name;
          uint32_t id = 0;
          if (!for_each_attr(group.payload, problem, [&](const Attr& g) {
                if (g.type == CTRL_ATTR_MCAST_GRP_NAME) return str(g, group_name, "group name");
                if (g.type == CTRL_ATTR_MCAST_GRP_ID)
                  return number_attr(g, id, "group id", problem);
                return true;
              })) {
            return false;
          }
          if (group_name == query.group_name && (!first_counts || f.group == 0)) f.group = id;
          return true;
        });
      default:
        return true;
    }
  });
  if (!framed) return false;
  if (!has_id || name != query.name) {
    problem =
        has_id ? "the family is \"" + name + "\", not " + std::string(query.name) : "no family id";
    return false;
  }
  family = f;
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

std::vector<uint8_t> genl_request(uint16_t type, uint16_t flags, uint32_t seq, uint32_t port_id,
                                  uint8_t command, uint8_t version) {
  std::vector<uint8_t> out = message_header(type, flags, seq);
  std::memcpy(out.data() + offsetof(nlmsghdr, nlmsg_pid), &port_id, sizeof port_id);
  out.push_back(command);
  out.push_back(version);
  out.resize(out.size() + 2, 0);  // genlmsghdr.reserved
  return out;
}

std::vector<uint8_t> family_request(std::string_view name, uint32_t seq, uint32_t port_id) {
  std::vector<uint8_t> out =
      genl_request(GENL_ID_CTRL, NLM_F_REQUEST, seq, port_id, CTRL_CMD_GETFAMILY, 1);
  const std::string terminated(name);
  put_attr(out, CTRL_ATTR_FAMILY_NAME, terminated.c_str(), terminated.size() + 1);
  finish(out);
  return out;
}

}  // namespace rdma_eventd::daemon::netlink_wire
