// Opening a listed journal file when its turn comes, which may be a minute after the listing on a
// receiver of 10,000 hosts: journal-remote may have rotated it meanwhile (renamed it to an
// archive, and made a new file under the old name), a vacuum may have deleted it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "journal_file.h"
#include "journal_files.h"
#include "journal_query.h"

namespace rdma_eventd_fleet {

struct OpenedFile {
  std::unique_ptr<JournalFile> file;  // null: not opened, for the reason below
  std::string path;                   // where the listed file was found (renamed: its new name)
  int error = 0;                      // cannot open: the errno (EMFILE: try it in a later group)
  bool deleted = false;               // gone since the listing: not there under any name
  bool not_regular = false;           // a directory, a FIFO, a device: not opened
  // Its header says it has no entry within the query's --since/--until (or none at all): not
  // opened with sd-journal, nothing to read.
  bool outside_window = false;
  // A file made under the listed name after the listing (the new file of a rotation), to read
  // as well.
  std::optional<ListedFile> replacement;
};

// The file that the listing found as `listed`, under the name it has now in the same directory.
// With --since or --until, a file whose header puts its first and last entries (and so, as
// sd-journal's own seeking takes them, all of them) outside the window is only looked at: 208
// bytes of its header read, no sd-journal. A receiver keeps many archives per host, most of
// them older than a --since of a few hours.
OpenedFile open_listed(const ListedFile& listed, const JournalQuery& query);

}  // namespace rdma_eventd_fleet
