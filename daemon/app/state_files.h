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

}  // namespace rdma_eventd::daemon
