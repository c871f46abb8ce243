#include "entry_runs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "temp_file.h"

namespace rdma_eventd_fleet {
namespace {

constexpr size_t kWriteBuffer = 1 << 20;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// A string's tag: kLiteral, the string follows and is not kept; kKept, it follows and becomes
// the table's next entry; n + kFirstIndex: the table's entry n.
constexpr uint64_t kLiteral = 0;
constexpr uint64_t kKept = 1;
constexpr uint64_t kFirstIndex = 2;

// Reads back one run.
class RunReader : public EntryStream {
 public:
  RunReader(int fd, uint64_t offset, uint64_t length, size_t buffer_bytes)
      : fd_(fd), next_offset_(offset), end_offset_(offset + length), chunk_(buffer_bytes) {}

  int next(JournalEntry& e) override {
    for (;;) {
      const Decoded d = decode(e);
      if (d == Decoded::kEntry) return 1;
      if (d == Decoded::kBad) return -EBADMSG;
      if (next_offset_ == end_offset_) return pos_ == data_.size() ? 0 : -EBADMSG;
      if (const int r = read_more(); r < 0) return r;
    }
  }

 private:
  enum class Decoded { kEntry, kMore, kBad };

  // Keeps what is not decoded yet and reads the next chunk after it (a longer buffer when one
  // entry is longer than a chunk).
  int read_more() {
    data_.erase(0, pos_);
    pos_ = 0;
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(std::max(chunk_, data_.size()), end_offset_ - next_offset_));
    const size_t have = data_.size();
    data_.resize(have + want);
    size_t got = 0;
    while (got < want) {
      const ssize_t n = ::pread(fd_, data_.data() + have + got, want - got,
                                static_cast<off_t>(next_offset_ + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        data_.resize(have + got);
        return n < 0 ? -errno : -EIO;
      }
      got += static_cast<size_t>(n);
    }
    next_offset_ += got;
    return 0;
  }

  bool varint(size_t& at, uint64_t& v) const {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at >= data_.size()) return false;
      const auto b = static_cast<uint8_t>(data_[at++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  // One string at `at`; kMore when the buffer ends first.
  Decoded string(size_t& at, std::string& out, std::vector<std::string>& added) {
    uint64_t tag = 0;
    if (!varint(at, tag)) return Decoded::kMore;
    if (tag >= kFirstIndex) {
      // The table, then the strings this entry kept before this one.
      const uint64_t index = tag - kFirstIndex;
      if (index < table_.size()) {
        out = table_[index];
      } else if (index - table_.size() < added.size()) {
        out = added[index - table_.size()];
      } else {
        return Decoded::kBad;
      }
      return Decoded::kEntry;
    }
    uint64_t length = 0;
    if (!varint(at, length)) return Decoded::kMore;
    if (length > data_.size() - at) return Decoded::kMore;
    out.assign(data_, at, length);
    at += length;
    if (tag == kKept) added.push_back(out);
    return Decoded::kEntry;
  }

  Decoded decode(JournalEntry& e) {
    size_t at = pos_;
    uint64_t delta = 0;
    if (!varint(at, delta)) return Decoded::kMore;
    // Strings kept by this entry join the table only once the whole entry is there.
    std::vector<std::string> added;
    std::string* const fields[] = {&e.hostname,    &e.event,  &e.device, &e.port,   &e.health,
                                   &e.link_change, &e.stream, &e.record, &e.message};
    uint64_t seq = 0;
    for (size_t i = 0; i < std::size(fields); ++i) {
      if (i == 7 && !varint(at, seq)) return Decoded::kMore;
      const Decoded d = string(at, *fields[i], added);
      if (d != Decoded::kEntry) return d;
      if (table_.size() + added.size() > RunFile::kMaxStrings) return Decoded::kBad;
    }
    e.seq = seq;
    previous_us_ = static_cast<int64_t>(static_cast<uint64_t>(previous_us_) +
                                        static_cast<uint64_t>(unzigzag(delta)));
    e.realtime_us = previous_us_;
    for (auto& s : added)
      table_.push_back(std::move(s));
    pos_ = at;
    return Decoded::kEntry;
  }

  int fd_;
  uint64_t next_offset_;
  uint64_t end_offset_;
  size_t chunk_;
  std::string data_;
  size_t pos_ = 0;
  std::vector<std::string> table_;
  int64_t previous_us_ = 0;
};

}  // namespace

std::unique_ptr<RunFile> RunFile::create(std::string* error) {
  std::string dir;
  const int fd = make_temporary_file(&dir, error);
  if (fd < 0) return nullptr;
  return std::unique_ptr<RunFile>(new RunFile(fd, dir));
}

RunFile::~RunFile() {
  ::close(fd_);
}

void RunFile::begin_run() {
  run_start_ = written_ + buffer_.size();
  strings_.clear();
  previous_us_ = 0;
}

void RunFile::put_string(const std::string& s) {
  if (const auto it = strings_.find(s); it != strings_.end()) {
    put_varint(buffer_, it->second + kFirstIndex);
    return;
  }
  // Only short strings are worth a place in the table: names, not records.
  const bool keep = s.size() <= 255 && strings_.size() < kMaxStrings;
  put_varint(buffer_, keep ? kKept : kLiteral);
  put_varint(buffer_, s.size());
  buffer_ += s;
  if (keep) strings_.emplace(s, static_cast<uint32_t>(strings_.size()));
}

bool RunFile::add(const JournalEntry& e) {
  put_varint(buffer_, zigzag(static_cast<int64_t>(static_cast<uint64_t>(e.realtime_us) -
                                                  static_cast<uint64_t>(previous_us_))));
  previous_us_ = e.realtime_us;
  for (const std::string* s :
       {&e.hostname, &e.event, &e.device, &e.port, &e.health, &e.link_change, &e.stream})
    put_string(*s);
  put_varint(buffer_, e.seq);
  // The record and the message, whole: never kept in the table.
  for (const std::string* s : {&e.record, &e.message}) {
    put_varint(buffer_, kLiteral);
    put_varint(buffer_, s->size());
    buffer_ += *s;
  }
  return buffer_.size() < kWriteBuffer || flush();
}

bool RunFile::flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = "writing a temporary file in " + dir_ + ": " + std::strerror(errno);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  written_ += done;
  buffer_.clear();
  return true;
}

bool RunFile::end_run() {
  if (!flush()) return false;
  runs_.push_back({run_start_, written_ - run_start_});
  return true;
}

std::unique_ptr<EntryStream> RunFile::read_run(size_t i, size_t buffer_bytes) const {
  return std::make_unique<RunReader>(fd_, runs_.at(i).offset, runs_.at(i).length, buffer_bytes);
}

}  // namespace rdma_eventd_fleet
