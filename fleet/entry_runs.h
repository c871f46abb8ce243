// Runs of entries in one temporary file: when a directory holds more journal files than this
// process may open at once, each group of files that fits is merged into a run, written here,
// and the runs are merged in the end. All the runs share the file's one descriptor (each is
// read back with pread), so any number of them can be merged at once. The file is unlinked
// from the start (O_TMPFILE): nothing is left behind, however the program ends.
//
// An entry is compact: its time as the difference from the one before, the short fields (host,
// event, device, port, verdict, link change, stream) as numbers into a table of the strings the
// run has seen (at most 4,096 kept, so a run of ever new names costs no memory), the seq, then
// the record and the message as they are (empty unless asked for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "entry_stream.h"

namespace rdma_eventd_fleet {

class RunFile {
 public:
  // In $TMPDIR, else /var/tmp (on disk, where /tmp may be memory); null and *error when it
  // cannot be made.
  static std::unique_ptr<RunFile> create(std::string* error);
  ~RunFile();
  RunFile(const RunFile&) = delete;
  RunFile& operator=(const RunFile&) = delete;

  // A run is the entries added between begin_run() and end_run(), in the order added.
  void begin_run();
  bool add(const JournalEntry& e);
  bool end_run();
  size_t runs() const { return runs_.size(); }
  uint64_t bytes() const { return written_; }
  // Why the last add() or end_run() failed ("writing /var/tmp: No space left on device").
  const std::string& error() const { return error_; }

  // Reads run `i` back, holding about `buffer_bytes` of it at a time (more for a longer entry).
  std::unique_ptr<EntryStream> read_run(size_t i, size_t buffer_bytes) const;

  static constexpr size_t kMaxStrings = 4096;

 private:
  RunFile(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
  bool flush();
  void put_string(const std::string& s);

  struct Extent {
    uint64_t offset;
    uint64_t length;
  };
  int fd_;
  std::string dir_;
  std::vector<Extent> runs_;
  uint64_t written_ = 0;
  uint64_t run_start_ = 0;
  std::string buffer_;
  std::unordered_map<std::string, uint32_t> strings_;  // this run's table
  int64_t previous_us_ = 0;
  std::string error_;
};

}  // namespace rdma_eventd_fleet
