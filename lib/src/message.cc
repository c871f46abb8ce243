// Message, the opaque form of a line from the daemon, and parse_line, which makes them.
#include <nlohmann/json.hpp>
#include <variant>

#include "rdma_eventd/protocol.h"
#include "schema/protocol_json.h"

namespace rdma_eventd {

// The alternatives in MessageKind's order.
using MessageValue = std::variant<Record, PortSnapshot, Hello, Reply, RequestError, Lost>;
static_assert(std::variant_size_v<MessageValue> == static_cast<size_t>(MessageKind::kLost) + 1);
static_assert(
    std::is_same_v<
        std::variant_alternative_t<static_cast<size_t>(MessageKind::kReply), MessageValue>, Reply>);

struct Message::Impl {
  std::string text;
  MessageValue value;
};

struct MessageAccess {
  static Message make(std::string_view text, MessageValue value) {
    Message m;
    m.impl_ = std::make_unique<Message::Impl>(Message::Impl{std::string(text), std::move(value)});
    return m;
  }

  template <typename T>
  static const T* alternative(const Message& m) {
    return m.impl_ ? std::get_if<T>(&m.impl_->value) : nullptr;
  }
};

namespace {

using nlohmann::json;

// Protocol lines are read leniently: a key a line lacks reads as empty or 0, so that the daemon
// may leave out what does not apply (a ping reply has no "records").
uint64_t u64_or(const json& obj, const char* key, uint64_t fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_unsigned() ? it->get<uint64_t>() : fallback;
}

std::string str_or(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Only the ids a request can have: dumping any other value would recurse as deep as the line
// nests, and a line of 64 MiB of '[' would overflow the client's stack.
std::string id_of(const json& obj) {
  auto it = obj.find("id");
  return it == obj.end() || !(it->is_number_integer() || it->is_string()) ? std::string()
                                                                          : it->dump();
}

std::optional<MessageValue> protocol_value(const json& obj, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<MessageValue> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  const std::string type = str_or(obj, "type");
  if (type == "hello") {
    auto p = obj.find("protocol");
    if (p == obj.end() || !p->is_number_integer()) return fail("hello: protocol: missing");
    return Hello{p->get<int>(),
                 str_or(obj, "version"),
                 str_or(obj, "stream"),
                 str_or(obj, "host"),
                 u64_or(obj, "seq", 0),
                 u64_or(obj, "subscriber", 0),
                 u64_or(obj, "max_request_bytes", 0),
                 u64_or(obj, "reporter", 0)};
  }
  if (type == "reply") {
    Reply reply{op_from_name(str_or(obj, "op")), id_of(obj), u64_or(obj, "seq", 0), std::nullopt,
                u64_or(obj, "records", 0)};
    if (auto c = obj.find("covered"); c != obj.end() && c->is_boolean()) {
      reply.covered = c->get<bool>();
    }
    return reply;
  }
  if (type == "error") {
    return RequestError{error_code_from_name(str_or(obj, "error")).value_or(ErrorCode::kBadRequest),
                        str_or(obj, "message"), id_of(obj), str_or(obj, "op")};
  }
  if (type == "lost") {
    return Lost{u64_or(obj, "first_seq", 0), u64_or(obj, "last_seq", 0), u64_or(obj, "records", 0)};
  }
  return fail("unknown line type '" + type + "'");
}

}  // namespace

Message::Message() = default;
Message::~Message() = default;
Message::Message(Message&& other) noexcept = default;
Message& Message::operator=(Message&& other) noexcept = default;

Message::Message(const Message& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr) {}

Message& Message::operator=(const Message& other) {
  if (this != &other) impl_ = other.impl_ ? std::make_unique<Impl>(*other.impl_) : nullptr;
  return *this;
}

bool Message::empty() const {
  return !impl_;
}

MessageKind Message::kind() const {
  return impl_ ? static_cast<MessageKind>(impl_->value.index()) : MessageKind::kRecord;
}

const std::string& Message::text() const {
  static const std::string kEmpty;
  return impl_ ? impl_->text : kEmpty;
}

const Record* Message::record() const {
  return MessageAccess::alternative<Record>(*this);
}
const PortSnapshot* Message::snapshot() const {
  return MessageAccess::alternative<PortSnapshot>(*this);
}
const Hello* Message::hello() const {
  return MessageAccess::alternative<Hello>(*this);
}
const Reply* Message::reply() const {
  return MessageAccess::alternative<Reply>(*this);
}
const RequestError* Message::error() const {
  return MessageAccess::alternative<RequestError>(*this);
}
const Lost* Message::lost() const {
  return MessageAccess::alternative<Lost>(*this);
}

std::optional<Message> parse_line(std::string_view text, std::string* error) {
  // The daemon writes records with "schema" first and protocol lines with "type" first; the
  // prefix decides which parser reads the line, so each line is parsed once.
  if (text.starts_with("{\"schema\":")) {
    if (text.find(",\"event\":\"snapshot\",") != std::string_view::npos) {
      auto s = snapshot_from_json(text, error);
      if (!s) return std::nullopt;
      return MessageAccess::make(text, std::move(*s));
    }
    auto r = record_from_json(text, error);
    if (!r) return std::nullopt;
    return MessageAccess::make(text, std::move(*r));
  }
  const json obj = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded() || !obj.is_object()) {
    if (error) *error = obj.is_discarded() ? "not valid JSON" : "not a JSON object";
    return std::nullopt;
  }
  auto value = protocol_value(obj, error);
  if (!value) return std::nullopt;
  return MessageAccess::make(text, std::move(*value));
}

}  // namespace rdma_eventd
