// Small pieces every measurement uses: the clock, owned descriptors, the command line, Unix
// sockets, and the one error type. The bench program reports failures as a message and a
// non-zero exit; run.sh stops at the first one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::bench {

struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine, so a timestamp
// taken here can be compared with one taken in another process.
int64_t mono_ns();

std::string errno_text(const std::string& what);

// Owned descriptors: the project's one UniqueFd (lib/internal).
using internal::UniqueFd;

// `--key value` options, `--flag` switches and, after `--`, a command line.
class Args {
 public:
  // `options` take a value, `flags` do not; anything else is an error. argv[0] is the
  // subcommand.
  Args(int argc, char** argv, const std::vector<std::string>& options,
       const std::vector<std::string>& flags);

  std::string str(const std::string& key) const;  // required
  std::string str(const std::string& key, const std::string& fallback) const;
  uint64_t num(const std::string& key) const;  // required
  uint64_t num(const std::string& key, uint64_t fallback) const;
  bool flag(const std::string& key) const { return flags_.count(key) != 0; }
  const std::vector<std::string>& command() const { return command_; }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> flags_;
  std::vector<std::string> command_;
};

std::vector<std::string> split(const std::string& text, char sep);

// The value of the first line of the file `path` that starts with `key` (what follows its first
// ':' or '=', trimmed of blanks and quotes; the whole line when it has neither), or "unknown".
std::string first_line_with(const std::string& path, const std::string& key);

// A connected AF_UNIX stream socket (blocking, close-on-exec).
UniqueFd connect_unix(const std::string& path);

void write_all(int fd, const std::string& data);

// Reads one '\n'-terminated line from a blocking socket, waiting at most `timeout_ms` in total.
// `carry` keeps what was read past the line.
std::string read_line(int fd, std::string& carry, int timeout_ms);

// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the soft limit in force.
uint64_t raise_nofile_limit();

// Appends one JSON line to `path` (the results file run.sh collects), or writes it to stdout.
void emit_result(const std::string& path, const std::string& json_line);

}  // namespace rdma_eventd::bench
