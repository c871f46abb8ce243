// Where the daemon keeps what survives its restart (the port health verdicts, the ports' link
// quality), and the boot those files belong to.
#pragma once

#include <string>
#include <string_view>

namespace rdma_eventd::daemon {

// `name` in $STATE_DIRECTORY (systemd's StateDirectory=; the first of a list), else in
// /var/lib/rdma-eventd.
std::string state_file_path(std::string_view name);

// This boot's id (/proc/sys/kernel/random/boot_id): monotonic times in a state file mean
// something only on the boot that wrote them.
std::string read_boot_id();

// Writes a state document whole or not at all (a temporary file beside it, fsync, rename), never
// larger than a reader takes (kMaxStateBytes: EFBIG). 0, or the errno.
int write_state_file(const std::string& path, std::string_view text);

}  // namespace rdma_eventd::daemon
