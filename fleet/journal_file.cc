#include "journal_file.h"

#include <systemd/sd-journal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rdma_eventd_fleet {
namespace {

bool add_match(sd_journal* j, const std::string& field, const std::string& value) {
  const std::string match = field + "=" + value;
  return sd_journal_add_match(j, match.data(), match.size()) >= 0;
}

// Sets up the matches: the daemon's identifier, any of the hosts, any of the events.
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

// A field's value into `out`, or "" when the entry does not have it.
void field(sd_journal* j, const char* name, std::string& out) {
  out.clear();
  const void* data = nullptr;
  size_t length = 0;
  if (sd_journal_get_data(j, name, &data, &length) < 0) return;
  const std::string_view text(static_cast<const char*>(data), length);
  const size_t prefix = std::strlen(name) + 1;  // "NAME="
  if (text.size() >= prefix) out.assign(text.substr(prefix));
}

}  // namespace

std::unique_ptr<JournalFile> JournalFile::set_up(sd_journal* j, const JournalQuery& query,
                                                 int* error) {
  std::unique_ptr<JournalFile> file(new JournalFile(j, query));
  if (!add_matches(j, query)) {
    *error = EINVAL;
    return nullptr;
  }
  return file;
}

std::unique_ptr<JournalFile> JournalFile::open_file(const std::string& path,
                                                    const JournalQuery& query, int* error) {
  const char* paths[] = {path.c_str(), nullptr};
  sd_journal* j = nullptr;
  const int r = sd_journal_open_files(&j, paths, 0);
  if (r < 0) {
    *error = -r;
    return nullptr;
  }
  return set_up(j, query, error);
}

std::unique_ptr<JournalFile> JournalFile::open_local(const JournalQuery& query, int* error) {
  sd_journal* j = nullptr;
  const int r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
  if (r < 0) {
    *error = -r;
    return nullptr;
  }
  return set_up(j, query, error);
}

JournalFile::~JournalFile() {
  sd_journal_close(journal_);
}

uint64_t JournalFile::usage() const {
  uint64_t bytes = 0;
  return sd_journal_get_usage(journal_, &bytes) >= 0 ? bytes : 0;
}

int JournalFile::next(JournalEntry& e) {
  sd_journal* j = journal_;
  int r = 0;
  if (!started_) {
    started_ = true;
    r = window_.since_us
            ? sd_journal_seek_realtime_usec(j, static_cast<uint64_t>(*window_.since_us))
            : sd_journal_seek_head(j);
    if (r < 0) return r;
  }
  while ((r = sd_journal_next(j)) > 0) {
    uint64_t realtime = 0;
    if ((r = sd_journal_get_realtime_usec(j, &realtime)) < 0) return r;
    const auto t = static_cast<int64_t>(realtime);
    if (window_.since_us && t < *window_.since_us) continue;
    if (window_.until_us && t > *window_.until_us) return 0;
    e.realtime_us = t;
    field(j, "_HOSTNAME", e.hostname);
    field(j, "RDMA_EVENT", e.event);
    field(j, "RDMA_DEVICE", e.device);
    field(j, "RDMA_PORT", e.port);
    // Looking for a field an entry does not have reads every field, the record's JSON included
    // (compressed in a receiver's files): only port_health records have a verdict.
    if (window_.whole_records || e.event == "port_health") {
      field(j, "RDMA_HEALTH", e.health);
    } else {
      e.health.clear();
    }
    // The same for link_quality records and their change ("bad", "hidden_down", ...), and for
    // devlink_health records and theirs ("error", "recovered", ...), in the same place.
    if (e.event == "devlink_health") {
      field(j, "RDMA_DEVLINK_CHANGE", e.link_change);
    } else if (window_.whole_records || e.event == "link_quality") {
      field(j, "RDMA_LINK_CHANGE", e.link_change);
    } else {
      e.link_change.clear();
    }
    field(j, "RDMA_STREAM", e.stream);
    std::string seq;
    field(j, "RDMA_SEQ", seq);
    e.seq = std::strtoull(seq.c_str(), nullptr, 10);
    if (window_.whole_records) {
      field(j, "RDMA_RECORD", e.record);
      field(j, "MESSAGE", e.message);
    } else {
      e.record.clear();
      e.message.clear();
    }
    ++entries_read_;
    return 1;
  }
  return r;
}

}  // namespace rdma_eventd_fleet
