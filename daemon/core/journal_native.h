// The journal's native protocol (systemd's JOURNAL_NATIVE_PROTOCOL): an entry is one datagram of
// fields, each "KEY=value\n" or, when the value holds a newline, "KEY\n", the value's length as a
// 64-bit little-endian number, the value and "\n". It is what sd_journal_sendv sends; writing it
// here, into one buffer the journal writer reuses, lets an entry go out with one send and no
// allocation (systemd/journal_socket.h). Pure.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace rdma_eventd::daemon {

// Appends fields to a string through a buffer on the stack: an entry's twenty-odd fields are
// copied into it without the string's capacity check and fill per field, and reach the string
// in one append when the writer is flushed (or destroyed, or full). The string is not to be
// touched otherwise while the writer holds unflushed fields.
class NativeFieldWriter {
 public:
  explicit NativeFieldWriter(std::string& out) : out_(out) {}
  ~NativeFieldWriter() { flush(); }
  NativeFieldWriter(const NativeFieldWriter&) = delete;
  NativeFieldWriter& operator=(const NativeFieldWriter&) = delete;

  // One field. `key` is a valid journal field name (the caller's constants). A value with a
  // newline is framed by its length.
  void text(std::string_view key, std::string_view value) {
    if (value.find('\n') == std::string_view::npos) {
      plain(key, value);
    } else {
      framed(key, value);
    }
  }
  // "KEY=value\n" for a value known to hold no newline (a number, a name the daemon chose),
  // without looking for one.
  void plain(std::string_view key, std::string_view value) {
    if (key.size() + value.size() + 2 > room()) {
      put(key);
      put("=");
      put(value);
      put("\n");
      return;
    }
    copy(key);
    *p_++ = '=';
    copy(value);
    *p_++ = '\n';
  }
  // Bytes as they are.
  void raw(std::string_view bytes) {
    if (bytes.size() > room()) {
      put(bytes);
    } else {
      copy(bytes);
    }
  }
  void flush();

 private:
  size_t room() const { return static_cast<size_t>(buf_ + sizeof buf_ - p_); }
  void copy(std::string_view s) {  // s fits
    if (!s.empty()) std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  void put(std::string_view s);  // flushes first when s does not fit
  void framed(std::string_view key, std::string_view value);

  std::string& out_;
  char buf_[2048];
  char* p_ = buf_;
};

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
