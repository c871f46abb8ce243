#include "journal_reader.h"

#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <queue>
#include <string_view>
#include <utility>

namespace rdma_eventctl {

struct JournalReader::Handle {
  sd_journal* journal = nullptr;
  ~Handle() {
    if (journal) sd_journal_close(journal);
  }
};

namespace {

namespace fs = std::filesystem;

// Where the local journal lives: persistent, then volatile.
const char* const kLocalDirectories[] = {"/var/log/journal", "/run/log/journal"};

// What a look at a directory tree found: journal files, and whether something was in the way.
struct FilesSeen {
  bool journal_files = false;
  bool denied = false;
};

void look_for_journal_files(const fs::path& dir, FilesSeen& seen) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec);
  if (ec) {
    seen.denied |= ec == std::errc::permission_denied;
    return;
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      seen.denied |= ec == std::errc::permission_denied;
      return;
    }
    const std::string name = it->path().filename().string();
    if (name.ends_with(".journal") || name.ends_with(".journal~")) seen.journal_files = true;
  }
  seen.denied |= ec == std::errc::permission_denied;
}

std::string where(const JournalQuery& q) {
  return q.directory.empty() ? "the local journal" : "the journal in " + q.directory;
}

JournalError no_access(const JournalQuery& q) {
  return {"cannot read " + where(q) +
              ": permission denied; root and the members of the groups 'systemd-journal' and "
              "'adm' may read it",
          kExitNoPerm};
}

// Why sd-journal opened no file: none there, or none this user may open.
JournalError explain_no_files(const JournalQuery& q) {
  FilesSeen seen;
  if (q.directory.empty()) {
    for (const char* dir : kLocalDirectories)
      look_for_journal_files(dir, seen);
  } else {
    look_for_journal_files(q.directory, seen);
  }
  if (seen.journal_files || seen.denied) return no_access(q);
  return {"no journal files in " + (q.directory.empty() ? std::string("/var/log/journal or "
                                                                      "/run/log/journal")
                                                        : q.directory),
          kExitNoInput};
}

bool add_match(sd_journal* j, const std::string& field, const std::string& value) {
  const std::string match = field + "=" + value;
  return sd_journal_add_match(j, match.data(), match.size()) >= 0;
}

// A field's value, or "" when the entry does not have it.
std::string field(sd_journal* j, const char* name) {
  const void* data = nullptr;
  size_t length = 0;
  if (sd_journal_get_data(j, name, &data, &length) < 0) return {};
  std::string_view text(static_cast<const char*>(data), length);
  const size_t prefix = std::strlen(name) + 1;  // "NAME="
  return text.size() >= prefix ? std::string(text.substr(prefix)) : std::string();
}

}  // namespace

JournalReader::JournalReader(std::vector<std::unique_ptr<Handle>> handles, JournalQuery query)
    : handles_(std::move(handles)), query_(std::move(query)) {}

JournalReader::~JournalReader() = default;

namespace {

// Sets up one sd-journal's matches: the daemon's identifier, any of the hosts, any of the events.
bool add_matches(sd_journal* j, const JournalQuery& query) {
  // Records are a few kilobytes at most; no field is cut short, however long.
  sd_journal_set_data_threshold(j, 0);
  bool ok = add_match(j, "SYSLOG_IDENTIFIER", query.identifier);
  // Matches on one field are alternatives; on different fields, all must hold.
  for (const auto& host : query.hosts)
    ok = ok && add_match(j, "_HOSTNAME", host);
  for (const auto& event : query.events)
    ok = ok && add_match(j, "RDMA_EVENT", event);
  return ok;
}

// The journal files under `dir`, in name order.
std::vector<std::string> journal_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(".journal") || name.ends_with(".journal~")) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::unique_ptr<JournalReader> JournalReader::open(const JournalQuery& query, JournalError* error) {
  std::vector<std::unique_ptr<Handle>> handles;
  const auto opened = [&](int r) {
    if (r >= 0) return true;
    if (r == -EACCES || r == -EPERM) {
      *error = no_access(query);
    } else {
      *error = {"cannot open " + where(query) + ": " + std::strerror(-r), kExitNoInput};
    }
    return false;
  };
  if (query.directory.empty() || query.files_per_reader == 0) {
    auto handle = std::make_unique<Handle>();
    const int r = query.directory.empty()
                      ? sd_journal_open(&handle->journal, SD_JOURNAL_LOCAL_ONLY)
                      : sd_journal_open_directory(&handle->journal, query.directory.c_str(), 0);
    if (!opened(r)) return nullptr;
    handles.push_back(std::move(handle));
  } else {
    struct stat st {};
    const int e = ::stat(query.directory.c_str(), &st) != 0 ? errno
                  : S_ISDIR(st.st_mode)                     ? 0
                                                            : ENOTDIR;
    if (e) {
      opened(-e);
      return nullptr;
    }
    const std::vector<std::string> files = journal_files(query.directory);
    for (size_t i = 0; i < files.size(); i += query.files_per_reader) {
      std::vector<const char*> paths;
      for (size_t k = i; k < files.size() && k < i + query.files_per_reader; ++k)
        paths.push_back(files[k].c_str());
      paths.push_back(nullptr);
      auto handle = std::make_unique<Handle>();
      // A file this user may not open leaves its group out; none at all is said below.
      if (sd_journal_open_files(&handle->journal, paths.data(), 0) < 0) continue;
      handles.push_back(std::move(handle));
    }
  }
  uint64_t total = 0;
  for (const auto& handle : handles) {
    uint64_t bytes = 0;
    if (sd_journal_get_usage(handle->journal, &bytes) >= 0) total += bytes;
  }
  if (handles.empty() || total == 0) {
    *error = explain_no_files(query);
    return nullptr;
  }
  for (const auto& handle : handles) {
    if (!add_matches(handle->journal, query)) {
      *error = {"cannot match on the identifier or host names given", kExitNoInput};
      return nullptr;
    }
  }
  return std::unique_ptr<JournalReader>(new JournalReader(std::move(handles), query));
}

namespace {

// Moves to the next entry within the window; 1 there is one (its time in *t), 0 none, < 0 an
// error.
int next_in_window(sd_journal* j, const JournalQuery& q, int64_t* t) {
  int r;
  while ((r = sd_journal_next(j)) > 0) {
    uint64_t realtime = 0;
    if ((r = sd_journal_get_realtime_usec(j, &realtime)) < 0) return r;
    *t = static_cast<int64_t>(realtime);
    if (q.since_us && *t < *q.since_us) continue;
    if (q.until_us && *t > *q.until_us) return 0;
    return 1;
  }
  return r;
}

int seek_start(sd_journal* j, const JournalQuery& q) {
  return q.since_us ? sd_journal_seek_realtime_usec(j, static_cast<uint64_t>(*q.since_us))
                    : sd_journal_seek_head(j);
}

void read_entry(sd_journal* j, const JournalQuery& q, int64_t t, JournalEntry& e) {
  e.realtime_us = t;
  e.hostname = field(j, "_HOSTNAME");
  e.record = q.whole_records ? field(j, "RDMA_RECORD") : std::string();
  e.event = field(j, "RDMA_EVENT");
  e.device = field(j, "RDMA_DEVICE");
  e.port = field(j, "RDMA_PORT");
  // Looking for a field an entry does not have reads every field, the record's JSON included
  // (compressed in a receiver's files): only port_health records have a verdict.
  e.health = q.whole_records || e.event == "port_health" ? field(j, "RDMA_HEALTH") : std::string();
  e.stream = field(j, "RDMA_STREAM");
  e.seq = std::strtoull(field(j, "RDMA_SEQ").c_str(), nullptr, 10);
  e.message = q.whole_records ? field(j, "MESSAGE") : std::string();
}

}  // namespace

bool JournalReader::for_each(const std::function<void(const JournalEntry&)>& each,
                             JournalError* error) {
  if (handles_.size() == 1) return read_one(*handles_.front(), each, error);
  return read_merged(each, error);
}

bool JournalReader::read_one(Handle& handle, const std::function<void(const JournalEntry&)>& each,
                             JournalError* error) {
  sd_journal* j = handle.journal;
  int r = seek_start(j, query_);
  int64_t t = 0;
  JournalEntry e;
  while (r >= 0 && (r = next_in_window(j, query_, &t)) > 0) {
    read_entry(j, query_, t, e);
    each(e);
  }
  if (r < 0) {
    *error = {"reading " + where(query_) + ": " + std::strerror(-r), kExitNoInput};
    return false;
  }
  return true;
}

bool JournalReader::read_merged(const std::function<void(const JournalEntry&)>& each,
                                JournalError* error) {
  // Each reader's next few entries, read at once: reading one file's entries in a row keeps
  // its pages and sd-journal's caches warm, where taking one entry at a time from files in turn
  // was half as fast. Memory: at most about kAheadInAll entries, whatever the journal's size.
  constexpr size_t kAheadInAll = 65536;
  const size_t kReadAhead = std::clamp<size_t>(kAheadInAll / handles_.size(), 16, 256);
  struct Ahead {
    std::vector<JournalEntry> entries;
    size_t next = 0;
    bool done = false;
  };
  std::vector<Ahead> ahead(handles_.size());
  int r = 0;
  const auto refill = [&](size_t i) {
    Ahead& a = ahead[i];
    sd_journal* j = handles_[i]->journal;
    a.entries.resize(kReadAhead);
    size_t n = 0;
    int64_t t = 0;
    while (n < kReadAhead && (r = next_in_window(j, query_, &t)) > 0)
      read_entry(j, query_, t, a.entries[n++]);
    a.entries.resize(n);
    a.next = 0;
    a.done = n < kReadAhead;
    return n > 0 && r >= 0;
  };
  // A min-heap of the readers by the time of their next entry.
  using Head = std::pair<int64_t, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < handles_.size() && r >= 0; ++i) {
    if ((r = seek_start(handles_[i]->journal, query_)) < 0) break;
    if (refill(i)) heads.emplace(ahead[i].entries.front().realtime_us, i);
  }
  while (r >= 0 && !heads.empty()) {
    const size_t i = heads.top().second;
    heads.pop();
    Ahead& a = ahead[i];
    each(a.entries[a.next++]);
    if (a.next == a.entries.size() && (a.done || !refill(i))) {
      a.entries = {};
      continue;
    }
    heads.emplace(a.entries[a.next].realtime_us, i);
  }
  if (r < 0) {
    *error = {"reading " + where(query_) + ": " + std::strerror(-r), kExitNoInput};
    return false;
  }
  return true;
}

}  // namespace rdma_eventctl
