#include "counters/sysfs_counters.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rdma_eventd/internal/unique_fd.h"

namespace rdma_eventd::daemon {
namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// What a counter file shows of its text in an error: printable ASCII, at most 32 bytes.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 32)) {
    if (c == '\n') break;
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out;
}

}  // namespace

bool CounterReadError::transient() const {
  switch (error) {
    case 0:
    case ENOENT:
    case ENOTDIR:
    case ENODEV:
    case ENXIO:
    case EACCES:
    case EPERM:
      return false;
    default:
      return true;
  }
}

CounterGroups counter_groups(const std::string& ibdev_path, uint32_t port) {
  const std::string dir = ibdev_path + "/ports/" + std::to_string(port);
  return {is_directory(dir + "/counters"), is_directory(dir + "/hw_counters")};
}

bool parse_counter_text(std::string_view text, uint64_t& value) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  value = v;
  return true;
}

std::string counter_path(const std::string& ibdev_path, uint32_t port, const std::string& name) {
  // counters/ names are bare; the driver's group carries its directory.
  return ibdev_path + "/ports/" + std::to_string(port) + "/" +
         (name.starts_with("hw_counters/") ? name : "counters/" + name);
}

std::optional<CounterReadError> read_port_counters(const std::string& ibdev_path, uint32_t port,
                                                   const std::vector<std::string>& names,
                                                   CounterDriver driver,
                                                   std::vector<CounterValue>& out) {
  for (const std::string& name : names) {
    const std::string path = counter_path(ibdev_path, port, name);
    internal::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return CounterReadError{path, std::strerror(errno), errno};
    char buf[64];
    ssize_t n;
    do {
      n = ::read(fd.get(), buf, sizeof buf);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return CounterReadError{path, std::strerror(errno), errno};
    const std::string_view text(buf, static_cast<size_t>(n));
    if (text.empty()) return CounterReadError{path, "empty"};
    uint64_t value = 0;
    if (!parse_counter_text(text, value)) {
      return CounterReadError{path, "not a number: '" + shown(text) + "'"};
    }
    out.push_back(counter_value(driver, name, value));
  }
  return std::nullopt;
}

}  // namespace rdma_eventd::daemon
