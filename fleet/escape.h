// Names that come from other hosts (a journal's _HOSTNAME, RDMA_DEVICE, a verdict) are any bytes
// the uploading host sent: how the fleet's outputs show them without letting them act on a
// terminal, break a page, or make a JSON writer give up.
#pragma once

#include <string>
#include <string_view>

namespace rdma_eventd_fleet {

// Whether `bytes` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view bytes);

// For a terminal or a page: one line of printable ASCII that shows exactly which bytes the name
// holds, so that nothing in it can act on a terminal, reorder or hide text, or pass for another
// name. Printable ASCII stays as it is; a backslash becomes \\; a control character (C0, DEL,
// and C1 as UTF-8) and every byte that is not part of valid UTF-8 become \xNN, a byte each;
// any other character beyond ASCII becomes \uXXXX (\UXXXXXXXX above U+FFFF): a bidi override
// or a zero-width space is seen, and a Cyrillic "о" in a host name cannot pass for an "o".
// Every backslash in the result begins one of these escapes, so two names never print alike.
std::string printable(std::string_view bytes);

// For JSON: a string any JSON writer can write, and no two names alike. A name that is valid
// UTF-8 with no backslash stays exactly as it is (the writer escapes control characters its own
// way); any other is printable()'s form, in which every backslash begins an escape, so it
// cannot be taken for a name that was kept as it is.
std::string json_text(std::string_view bytes);

// What the fleet's JSON outputs are written with: every character beyond ASCII as a \uXXXX
// escape (ensure_ascii), so that a bidi override in a name cannot reorder a terminal's line.
template <typename Json>
std::string dump_ascii(const Json& j) {
  return j.dump(-1, ' ', true);
}

}  // namespace rdma_eventd_fleet
