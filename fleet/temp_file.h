// A temporary file for what does not fit in memory (the runs of merged entries, the page's
// marks): in $TMPDIR, else /var/tmp (on disk, where /tmp may be memory), unlinked from the
// start (O_TMPFILE), so that nothing is left behind however the program ends.
#pragma once

#include <string>

namespace rdma_eventd_fleet {

// A descriptor open for reading and writing, or -1 and *error ("cannot make a temporary file
// in /var/tmp: Permission denied"); *dir is the directory it is in (for later messages).
int make_temporary_file(std::string* dir, std::string* error);

}  // namespace rdma_eventd_fleet
