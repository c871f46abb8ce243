// What a journal file's name says of its time. journald and journal-remote name an archive
// after its first entry: NAME@SEQNUM_ID-HEAD_SEQNUM-HEAD_REALTIME.journal (journal_file_archive()
// in systemd's journal-file.c: 32, 16 and 16 hex digits), and the file that replaced it (the
// next archive, or the active NAME.journal) took the entries that came after it. So among the
// files of one NAME in the order of their first entries, an archive's entries all came before
// the next archive's first: with --since or --until, an archive whose time range cannot hold a
// match is known from the names alone, and never opened, not even for its header. (Like
// sd-journal's own seeking, this takes a host's clock to go forward: entries of a clock that
// stepped back lie where their time puts them.) Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "journal_files.h"

namespace rdma_eventd_fleet {

// The first entry's time in an archive's name, if `path`'s last component is one.
std::optional<int64_t> archive_head_realtime(std::string_view path);

// For each of `files`, whether its name alone puts all its entries outside [since, until]:
// an archive whose first entry is after `until`, or whose next archive (of the same NAME in the
// same directory) begins before `since`. The newest archive of a NAME is never decided here
// (its successor, the active file, has no time in its name): its header says.
std::vector<bool> outside_by_name(const std::vector<ListedFile>& files,
                                  std::optional<int64_t> since_us, std::optional<int64_t> until_us);

}  // namespace rdma_eventd_fleet
