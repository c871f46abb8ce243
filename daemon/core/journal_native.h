// The journal's native protocol (systemd's JOURNAL_NATIVE_PROTOCOL): an entry is one datagram of
// fields, each "KEY=value\n" or, when the value holds a newline, "KEY\n", the value's length as a
// 64-bit little-endian number, the value and "\n". It is what sd_journal_sendv sends; writing it
// here, into one buffer the journal writer reuses, lets an entry go out with one send and no
// allocation (systemd/journal_socket.h). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon {

// Appends one field. `key` is a valid journal field name (the caller's constants).
void append_native_field(std::string& out, std::string_view key, std::string_view value);

// Appends "KEY=value\n" for a value known to hold no newline (a number, a name the daemon
// chose), without looking for one.
void append_plain_native_field(std::string& out, std::string_view key, std::string_view value);

// Appends a "KEY=value" string, the form sd_journal_sendv takes (a summary's fields). Nothing
// is appended for a string without '='.
void append_native_field(std::string& out, std::string_view key_equals_value);

// The fields of a datagram of this protocol as "KEY=value" strings, the form sd_journal_sendv
// takes (a value keeps its newlines): for an entry the socket cannot take. A field cut short
// ends the list.
std::vector<std::string> native_fields(std::string_view datagram);

}  // namespace rdma_eventd::daemon
