// Shared by the request parser and the daemon's configuration reader, which both turn a parse
// failure into one readable line. Internal: not installed.
#pragma once

#include <string>
#include <string_view>

namespace rdma_eventd {

// "invalid JSON: ..." from a nlohmann::json exception's what(). Its parse errors say where
// ("[json.exception.parse_error.101] parse error at line 1, column 9: ..."): the place and the
// reason are kept, the exception's id is dropped. Out-of-range errors (a number like 1e400, too
// large for a double) keep their text without the id.
inline std::string invalid_json_message(std::string_view what) {
  size_t pos = what.find("parse error at ");
  if (pos == std::string_view::npos) {
    const size_t id_end = what.find("] ");
    pos = what.starts_with("[json.exception.") && id_end != std::string_view::npos ? id_end + 2 : 0;
  }
  return "invalid JSON: " + std::string(what.substr(pos));
}

}  // namespace rdma_eventd
