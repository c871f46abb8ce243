#include "journal_file.h"

#include <fcntl.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rdma_eventd_fleet {
namespace {

using rdma_eventd::internal::UniqueFd;

bool add_match(sd_journal* j, const std::string& field, const std::string& value) {
  const std::string match = field + "=" + value;
  return sd_journal_add_match(j, match.data(), match.size()) >= 0;
}

// Sets up the matches: the daemon's identifier, any of the hosts, any of the events.
bool add_matches(sd_journal* j, const JournalQuery& query) {
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

bool any_of(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

// An sd-journal over the file open as `fd`. It is given a descriptor of its own: systemd 252
// closes the descriptors it was given, with the journal or as soon as it drops the file, and
// the reader goes on with the file after that (the header, reading on).
int open_over(int fd, sd_journal** j) {
  int fds[] = {fcntl(fd, F_DUPFD_CLOEXEC, 3)};
  if (fds[0] < 0) return -errno;
  const int r = sd_journal_open_files_fd(j, fds, 1, 0);
  if (r < 0) {
    ::close(fds[0]);
    return r;
  }
  // Records are a few kilobytes at most; no field is cut short, however long.
  sd_journal_set_data_threshold(*j, 0);
  return r;
}

}  // namespace

std::optional<JournalHeader> read_journal_header(int fd) {
  unsigned char bytes[kJournalHeaderBytes];
  if (pread(fd, bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) return std::nullopt;
  return parse_journal_header(bytes, sizeof bytes);
}

bool JournalFile::Place::operator==(const Place& o) const {
  return realtime == o.realtime && monotonic == o.monotonic &&
         std::memcmp(boot, o.boot, sizeof boot) == 0;
}

JournalFile::JournalFile(sd_journal* j, const JournalQuery& q, UniqueFd fd)
    : journal_(j), query_(q), fd_(std::move(fd)) {}

std::unique_ptr<JournalFile> JournalFile::set_up(sd_journal* j, const JournalQuery& query,
                                                 UniqueFd fd, int* error) {
  std::unique_ptr<JournalFile> file(new JournalFile(j, query, std::move(fd)));
  sd_journal_set_data_threshold(j, 0);
  if (!add_matches(j, query)) {
    *error = EINVAL;
    return nullptr;
  }
  return file;
}

std::unique_ptr<JournalFile> JournalFile::open_fd(UniqueFd fd, const JournalQuery& query,
                                                  int* error) {
  sd_journal* j = nullptr;
  const int r = open_over(fd.get(), &j);
  if (r < 0) {
    *error = -r;
    return nullptr;
  }
  return set_up(j, query, std::move(fd), error);
}

std::unique_ptr<JournalFile> JournalFile::open_local(const JournalQuery& query, int* error) {
  sd_journal* j = nullptr;
  const int r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
  if (r < 0) {
    *error = -r;
    return nullptr;
  }
  return set_up(j, query, UniqueFd(), error);
}

JournalFile::~JournalFile() {
  sd_journal_close(journal_);
}

uint64_t JournalFile::usage() const {
  uint64_t bytes = 0;
  return sd_journal_get_usage(journal_, &bytes) >= 0 ? bytes : 0;
}

int JournalFile::next(JournalEntry& e) {
  if (mode_ == Mode::kIndex) {
    const int r = next_indexed(e);
    if (r > 0 || !fd_) return r;  // the local journal: as sd-journal reads it
    if (r == 0 && whole()) {
      mode_ = Mode::kDone;
      return 0;
    }
    through_index_ = entries_read_;
    if (!read_on()) {
      end_damaged();
      return 0;
    }
  }
  if (mode_ == Mode::kEntryByEntry) {
    const int r = next_entry_by_entry(e);
    if (r > 0) return r;
    end_damaged();
  }
  return 0;
}

void JournalFile::fill(int64_t realtime, JournalEntry& e) {
  sd_journal* j = journal_;
  e.realtime_us = realtime;
  field(j, "_HOSTNAME", e.hostname);
  field(j, "RDMA_EVENT", e.event);
  field(j, "RDMA_DEVICE", e.device);
  field(j, "RDMA_PORT", e.port);
  // Looking for a field an entry does not have reads every field, the record's JSON included
  // (compressed in a receiver's files): only port_health records have a verdict.
  if (query_.whole_records || e.event == "port_health") {
    field(j, "RDMA_HEALTH", e.health);
  } else {
    e.health.clear();
  }
  // The same for link_quality records and their change ("bad", "hidden_down", ...), and for
  // devlink_health records and theirs ("error", "recovered", ...), in the same place.
  if (e.event == "devlink_health") {
    field(j, "RDMA_DEVLINK_CHANGE", e.link_change);
  } else if (query_.whole_records || e.event == "link_quality") {
    field(j, "RDMA_LINK_CHANGE", e.link_change);
  } else {
    e.link_change.clear();
  }
  field(j, "RDMA_STREAM", e.stream);
  std::string seq;
  field(j, "RDMA_SEQ", seq);
  e.seq = std::strtoull(seq.c_str(), nullptr, 10);
  if (query_.whole_records) {
    field(j, "RDMA_RECORD", e.record);
    field(j, "MESSAGE", e.message);
  } else {
    e.record.clear();
    e.message.clear();
  }
  ++entries_read_;
}

JournalFile::Place JournalFile::place(uint64_t realtime) const {
  Place p;
  p.realtime = realtime;
  sd_id128_t boot{};
  sd_journal_get_monotonic_usec(journal_, &p.monotonic, &boot);
  static_assert(sizeof boot == sizeof p.boot);
  std::memcpy(p.boot, boot.bytes, sizeof p.boot);
  return p;
}

int JournalFile::next_indexed(JournalEntry& e) {
  sd_journal* j = journal_;
  int r = 0;
  if (!started_) {
    started_ = true;
    r = query_.since_us ? sd_journal_seek_realtime_usec(j, static_cast<uint64_t>(*query_.since_us))
                        : sd_journal_seek_head(j);
    if (r < 0) return r;
  }
  while ((r = sd_journal_next(j)) > 0) {
    uint64_t realtime = 0;
    if ((r = sd_journal_get_realtime_usec(j, &realtime)) < 0) return r;
    const auto t = static_cast<int64_t>(realtime);
    if (query_.since_us && t < *query_.since_us) continue;
    if (query_.until_us && t > *query_.until_us) return 0;
    fill(t, e);
    if (fd_) last_ = place(realtime);
    return 1;
  }
  return r;
}

bool JournalFile::whole() {
  // sd-journal drops a file it cannot go on reading from its list (and its usage) and reports
  // the end of the journal.
  if (usage() == 0) return false;
  const std::optional<JournalHeader> header = read_journal_header(fd_.get());
  if (!header || header->entries == 0) return true;
  // The last entry it reaches, of any program, against the one the header names (read first: a
  // file still being written only grows).
  sd_journal* j = journal_;
  sd_journal_flush_matches(j);
  uint64_t last = 0;
  if (sd_journal_seek_tail(j) < 0 || sd_journal_previous(j) <= 0 ||
      sd_journal_get_realtime_usec(j, &last) < 0) {
    return false;
  }
  return last >= header->tail_realtime_us;
}

bool JournalFile::read_on() {
  // The sd-journal that stopped short goes first, with its descriptor: at the limit of open
  // files, the new one takes that one's place.
  sd_journal_close(journal_);
  journal_ = nullptr;
  if (open_over(fd_.get(), &journal_) < 0) return false;
  if (sd_journal_seek_head(journal_) < 0) return false;
  mode_ = Mode::kEntryByEntry;
  skipping_ = entries_read_ > 0;
  return true;
}

bool JournalFile::matches(JournalEntry& e) {
  // The identifier first: on a receiver most entries are other programs'.
  std::string& value = e.message;  // a buffer, filled again by fill()
  field(journal_, "SYSLOG_IDENTIFIER", value);
  if (value != query_.identifier) return false;
  if (!query_.hosts.empty()) {
    field(journal_, "_HOSTNAME", value);
    if (!any_of(query_.hosts, value)) return false;
  }
  if (!query_.events.empty()) {
    field(journal_, "RDMA_EVENT", value);
    if (!any_of(query_.events, value)) return false;
  }
  return true;
}

int JournalFile::next_entry_by_entry(JournalEntry& e) {
  sd_journal* j = journal_;
  int r = 0;
  // Every entry is walked, whatever the window: how many could be read is part of the report.
  while ((r = sd_journal_next(j)) > 0) {
    ++walked_;
    uint64_t realtime = 0;
    if (sd_journal_get_realtime_usec(j, &realtime) < 0) continue;
    if (skipping_) {
      skipping_ = !(place(realtime) == last_);
      continue;
    }
    const auto t = static_cast<int64_t>(realtime);
    if (query_.since_us && t < *query_.since_us) continue;
    if (query_.until_us && t > *query_.until_us) continue;
    if (!matches(e)) continue;
    fill(t, e);
    return 1;
  }
  return r;
}

void JournalFile::end_damaged() {
  if (mode_ == Mode::kDone) return;
  mode_ = Mode::kDone;
  const std::optional<JournalHeader> header = read_journal_header(fd_.get());
  damage_ = FileDamage{.through_index = through_index_,
                       .readable = walked_,
                       .in_header = header ? header->entries : 0,
                       .place_lost = skipping_};
}

}  // namespace rdma_eventd_fleet
