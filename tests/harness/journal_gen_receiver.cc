#include "journal_gen_receiver.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "journal_gen_units.h"

namespace rdma_journal_gen {
namespace {

const char* const kRemote = "/lib/systemd/systemd-journal-remote";

// The header's fields that name an archive (systemd's journal-def.h, struct Header; the file
// format is documented as stable): little-endian, at these offsets.
constexpr size_t kHeaderRead = 208;
constexpr size_t kState = 16;
constexpr size_t kSeqnumId = 72;
constexpr size_t kHeadSeqnum = 168;
constexpr size_t kHeadRealtime = 184;
constexpr unsigned char kStateArchived = 2;

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

// One run of systemd-journal-remote writing one file, its entries piped in as export format.
class RemoteFile {
 public:
  RemoteFile(std::string path, std::string host, std::string log)
      : path_(std::move(path)), host_(std::move(host)), log_(std::move(log)) {}
  RemoteFile(const RemoteFile&) = delete;
  RemoteFile& operator=(const RemoteFile&) = delete;
  ~RemoteFile() {
    if (pipe_) ::pclose(pipe_);
  }

  bool open() {
    const std::string command = std::string(kRemote) + " --output=" + path_ + " - 2>" + log_;
    pipe_ = ::popen(command.c_str(), "w");
    if (!pipe_) std::perror("rdma-journal-gen: popen");
    return pipe_ != nullptr;
  }
  void add(const std::string& entry) {
    buffer_ += entry;
    if (buffer_.size() > (1 << 20)) flush();
  }
  // Ends the run; says what journal-remote said when it failed.
  bool close() {
    flush();
    const int status = ::pclose(pipe_);
    pipe_ = nullptr;
    if (written_ && status == 0) return true;
    std::fprintf(stderr, "rdma-journal-gen: %s failed for %s (%s)%s\n", kRemote, host_.c_str(),
                 path_.c_str(), written_ ? "" : ": it stopped reading");
    std::FILE* said = std::fopen(log_.c_str(), "r");
    char line[512];
    while (said && std::fgets(line, sizeof line, said))
      std::fprintf(stderr, "  %s", line);
    if (said) std::fclose(said);
    return false;
  }

 private:
  void flush() {
    written_ = written_ && std::fwrite(buffer_.data(), 1, buffer_.size(), pipe_) == buffer_.size();
    buffer_.clear();
  }
  std::string path_, host_, log_;
  std::FILE* pipe_ = nullptr;
  std::string buffer_;
  bool written_ = true;
};

// Archives the file at `path` as journald archives a file it rotates (journal_file_archive(),
// src/libsystemd/sd-journal/journal-file.c; systemd 252's libsystemd-shared has the same
// format): renamed to PATH-without-.journal@SEQNUM_ID-HEAD_SEQNUM-HEAD_REALTIME.journal, its
// header's sequence number id (32 hex digits), first entry's sequence number and time (16 hex
// digits each), in the state "archived". journal-remote 252 rotates only a file that is full
// (128 MiB by default; journal-remote.conf has no MaxFileSize= before systemd 253), so each
// archive here is a run of its own, renamed after it. Returns 0 or an errno.
int archive(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno;
  unsigned char h[kHeaderRead];
  int error = 0;
  if (::pread(fd, h, sizeof h, 0) != static_cast<ssize_t>(sizeof h) ||
      std::memcmp(h, "LPKSHHRH", 8) != 0) {
    error = EBADMSG;
  } else if (::pwrite(fd, &kStateArchived, 1, kState) != 1) {
    error = errno;
  }
  ::close(fd);
  if (error) return error;
  std::string name = path.substr(0, path.size() - 8) + "@";
  char hex[3];
  for (size_t i = 0; i < 16; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", h[kSeqnumId + i]);
    name += hex;
  }
  char tail[48];
  std::snprintf(tail, sizeof tail, "-%016" PRIx64 "-%016" PRIx64 ".journal", le64(h + kHeadSeqnum),
                le64(h + kHeadRealtime));
  name += tail;
  return ::rename(path.c_str(), name.c_str()) == 0 ? 0 : errno;
}

// What is done to a file once journal-remote has written it: its zero blocks freed (--sparse),
// archived unless it is the host's newest.
bool finish(const std::string& path, const ReceiverShape& shape, bool archived) {
  if (const int error = shape.sparse ? punch_zero_blocks(path) : 0) {
    std::fprintf(stderr, "rdma-journal-gen: --sparse: %s: %s\n", path.c_str(),
                 std::strerror(error));
    return false;
  }
  if (const int error = archived ? archive(path) : 0) {
    std::fprintf(stderr, "rdma-journal-gen: archiving %s: %s\n", path.c_str(),
                 std::strerror(error));
    return false;
  }
  return true;
}

// Host `index`'s files: its rdma-eventd entries and its other units', merged in time order,
// each stretch of the shape's time through a journal-remote run of its own.
bool write_host(const std::string& dir, size_t index, const HostEntries& h,
                const ReceiverShape& shape, const std::string& log) {
  const std::string active = dir + "/remote-" + h.id.name + ".journal";
  const std::vector<OtherEntry> other = plan_other_units(
      index, shape.seed, other_units_count(shape, h.records), shape.from_us, shape.to_us);
  const size_t stretches = std::max<size_t>(1, shape.archives);
  const int64_t span = std::max<int64_t>(1, shape.to_us - shape.from_us);
  const auto stretch_of = [&](int64_t t) {
    if (t < shape.from_us) return size_t{0};
    return std::min(stretches - 1, static_cast<size_t>(static_cast<__int128>(t - shape.from_us) *
                                                       static_cast<__int128>(stretches) / span));
  };
  std::optional<RemoteFile> file;
  size_t current = 0;
  size_t r = 0, o = 0;
  while (r < h.rdma.size() || o < other.size()) {
    const bool rdma =
        o == other.size() || (r < h.rdma.size() && h.rdma[r].time_us <= other[o].time_us);
    const size_t stretch = stretch_of(rdma ? h.rdma[r].time_us : other[o].time_us);
    if (file && stretch > current) {  // a later stretch: this one is archived
      if (!file->close() || !finish(active, shape, true)) return false;
      file.reset();
    }
    if (!file) {
      file.emplace(active, h.id.name, log);
      if (!file->open()) return false;
      current = stretch;
    }
    file->add(rdma ? h.rdma[r++].text : other_unit_entry(other[o++], h.id, index, shape.seed));
  }
  if (!file) {  // a host with no entry: journal-remote's empty file, as it makes one
    file.emplace(active, h.id.name, log);
    if (!file->open()) return false;
  }
  return file->close() && finish(active, shape, false);
}

// Runs write(host, job) for every host, `jobs` processes at once (fork), each taking every
// jobs-th host: the hosts' entries are the same whichever process makes them.
bool in_jobs(size_t hosts, unsigned jobs, const std::function<bool(size_t, unsigned)>& write) {
  jobs = static_cast<unsigned>(std::min<size_t>(std::max(jobs, 1u), std::max<size_t>(hosts, 1)));
  if (jobs == 1) {
    for (size_t i = 0; i < hosts; ++i)
      if (!write(i, 0)) return false;
    return true;
  }
  std::fflush(nullptr);
  std::vector<pid_t> children;
  bool ok = true;
  for (unsigned j = 0; j < jobs; ++j) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("rdma-journal-gen: fork");
      ok = false;
      break;
    }
    if (pid == 0) {
      for (size_t i = j; i < hosts; i += jobs)
        if (!write(i, j)) ::_exit(1);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

}  // namespace

size_t other_units_count(const ReceiverShape& shape, size_t records) {
  return static_cast<size_t>(std::llround(shape.other_units * static_cast<double>(records)));
}

bool write_receiver(const std::string& dir, size_t hosts,
                    const std::function<HostEntries(size_t)>& host, const ReceiverShape& shape) {
  // A journal-remote that fails midway: its messages are kept and said, not a SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  const auto log = [&dir](unsigned job) {
    return dir + "/.journal-remote." + std::to_string(job) + ".log";
  };
  const bool ok = in_jobs(hosts, shape.jobs, [&](size_t i, unsigned job) {
    return write_host(dir, i, host(i), shape, log(job));
  });
  if (ok) {
    for (unsigned job = 0; job < std::max(shape.jobs, 1u); ++job)
      ::unlink(log(job).c_str());
  }
  return ok;
}

// systemd 252's journal-remote allocates 8 MiB for every file it creates, 3.6 MiB of it a data
// hash table sized for 128 MiB (its defaults; journal-remote.conf has no MaxFileSize= before
// systemd 253), nearly all zeros for a host's day of records.
int punch_zero_blocks(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno;
  constexpr size_t kBlock = 4096;
  std::vector<char> block(kBlock);
  const std::vector<char> zeros(kBlock, 0);
  int error = 0;
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, block.data(), kBlock, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    if (static_cast<size_t>(n) == kBlock && std::memcmp(block.data(), zeros.data(), kBlock) == 0 &&
        ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, kBlock) != 0) {
      error = errno;
      break;
    }
    offset += n;
  }
  ::close(fd);
  return error;
}

}  // namespace rdma_journal_gen
