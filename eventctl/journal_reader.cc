#include "journal_reader.h"

#include <systemd/sd-journal.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

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

JournalReader::JournalReader(std::unique_ptr<Handle> handle, JournalQuery query)
    : handle_(std::move(handle)), query_(std::move(query)) {}

JournalReader::~JournalReader() = default;

std::unique_ptr<JournalReader> JournalReader::open(const JournalQuery& query, JournalError* error) {
  auto handle = std::make_unique<Handle>();
  const int r = query.directory.empty()
                    ? sd_journal_open(&handle->journal, SD_JOURNAL_LOCAL_ONLY)
                    : sd_journal_open_directory(&handle->journal, query.directory.c_str(), 0);
  if (r < 0) {
    if (r == -EACCES || r == -EPERM) {
      *error = no_access(query);
    } else {
      *error = {"cannot open " + where(query) + ": " + std::strerror(-r), kExitNoInput};
    }
    return nullptr;
  }
  uint64_t bytes = 0;
  if (sd_journal_get_usage(handle->journal, &bytes) < 0 || bytes == 0) {
    *error = explain_no_files(query);
    return nullptr;
  }
  // Records are a few kilobytes at most; no field is cut short, however long.
  sd_journal_set_data_threshold(handle->journal, 0);
  bool ok = add_match(handle->journal, "SYSLOG_IDENTIFIER", query.identifier);
  // Matches on one field are alternatives; on different fields, all must hold.
  for (const auto& host : query.hosts)
    ok = ok && add_match(handle->journal, "_HOSTNAME", host);
  if (!ok) {
    *error = {"cannot match on the identifier or host names given", kExitNoInput};
    return nullptr;
  }
  return std::unique_ptr<JournalReader>(new JournalReader(std::move(handle), query));
}

bool JournalReader::for_each(const std::function<void(const JournalEntry&)>& each,
                             JournalError* error) {
  sd_journal* j = handle_->journal;
  int r = query_.since_us
              ? sd_journal_seek_realtime_usec(j, static_cast<uint64_t>(*query_.since_us))
              : sd_journal_seek_head(j);
  while (r >= 0 && (r = sd_journal_next(j)) > 0) {
    uint64_t realtime = 0;
    if ((r = sd_journal_get_realtime_usec(j, &realtime)) < 0) break;
    const auto t = static_cast<int64_t>(realtime);
    if (query_.since_us && t < *query_.since_us) continue;
    if (query_.until_us && t > *query_.until_us) break;
    JournalEntry e;
    e.realtime_us = t;
    e.hostname = field(j, "_HOSTNAME");
    e.record = field(j, "RDMA_RECORD");
    e.event = field(j, "RDMA_EVENT");
    e.device = field(j, "RDMA_DEVICE");
    e.port = field(j, "RDMA_PORT");
    e.health = field(j, "RDMA_HEALTH");
    e.stream = field(j, "RDMA_STREAM");
    e.seq = std::strtoull(field(j, "RDMA_SEQ").c_str(), nullptr, 10);
    e.message = field(j, "MESSAGE");
    each(e);
  }
  if (r < 0) {
    *error = {"reading " + where(query_) + ": " + std::strerror(-r), kExitNoInput};
    return false;
  }
  return true;
}

}  // namespace rdma_eventctl
