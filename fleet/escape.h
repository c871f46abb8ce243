// Names that come from other hosts (a journal's _HOSTNAME, RDMA_DEVICE, a verdict) are any bytes
// the uploading host sent: how the fleet's outputs show them without letting them act on a
// terminal, break a page, or make a JSON writer give up.
#pragma once

#include <string>
#include <string_view>

namespace rdma_eventd_fleet {

// Whether `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view bytes);

// For a terminal or a page: one line of text that shows exactly which bytes the name holds.
// Valid UTF-8 stays as it is, but for control characters (C0, DEL, and C1 as UTF-8), which
// become \xNN for each of their bytes, as does every byte that is not part of valid UTF-8; a
// backslash becomes \\, so that an escape in the name cannot pass for one of these.
std::string printable(std::string_view bytes);

// For JSON: a string any JSON writer can write. Valid UTF-8 stays exactly as it is (the writer
// escapes control characters its own way); anything else is printable()'s form, so the name is
// kept, byte for byte, in a form that reads as text.
std::string json_text(std::string_view bytes);

}  // namespace rdma_eventd_fleet
