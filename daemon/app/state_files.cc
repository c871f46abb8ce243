#include "app/state_files.h"

#include <cerrno>
#include <cstdlib>

#include "core/state_document.h"
#include "rdma_eventd/internal/atomic_file.h"
#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon {

std::string state_file_path(std::string_view name) {
  // secure_getenv: a daemon started setuid would not take its state directory from the caller.
  const char* dir = ::secure_getenv("STATE_DIRECTORY");
  std::string d = dir && *dir ? dir : "/var/lib/rdma-eventd";
  // systemd passes a colon-separated list when there are several: the first is ours.
  d = d.substr(0, d.find(':'));
  return d + "/" + std::string(name);
}

std::string read_boot_id() {
  std::string id = internal::read_small_file("/proc/sys/kernel/random/boot_id", 64).text;
  return id.substr(0, id.find('\n'));
}

int write_state_file(const std::string& path, std::string_view text) {
  if (text.size() > kMaxStateBytes) return EFBIG;
  return internal::write_file_atomically(path, text, {.mode = 0644, .sync = true});
}

}  // namespace rdma_eventd::daemon
