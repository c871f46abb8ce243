#include "archive_names.h"

#include <algorithm>
#include <map>
#include <string>

namespace rdma_eventd_fleet {
namespace {

constexpr std::string_view kSuffix = ".journal";
constexpr size_t kIdDigits = 32;
constexpr size_t kNumberDigits = 16;

std::optional<uint64_t> hex(std::string_view digits) {
  uint64_t v = 0;
  for (const char c : digits) {
    int d = 0;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    v = v << 4 | static_cast<uint64_t>(d);
  }
  return v;
}

// The part of an archive's path before its '@' (its directory and NAME), if it is one.
std::optional<std::string_view> archive_stem(std::string_view path) {
  const size_t slash = path.rfind('/');
  const size_t at = path.rfind('@');
  if (at == std::string_view::npos || (slash != std::string_view::npos && at < slash))
    return std::nullopt;
  return path.substr(0, at);
}

}  // namespace

std::optional<int64_t> archive_head_realtime(std::string_view path) {
  if (!archive_stem(path) || path.size() < kSuffix.size() ||
      path.substr(path.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  const std::string_view rest =
      path.substr(path.rfind('@') + 1, path.size() - path.rfind('@') - 1 - kSuffix.size());
  // SEQNUM_ID-HEAD_SEQNUM-HEAD_REALTIME
  if (rest.size() != kIdDigits + 1 + kNumberDigits + 1 + kNumberDigits || rest[kIdDigits] != '-' ||
      rest[kIdDigits + 1 + kNumberDigits] != '-' || !hex(rest.substr(0, kIdDigits / 2)) ||
      !hex(rest.substr(kIdDigits / 2, kIdDigits / 2)) ||
      !hex(rest.substr(kIdDigits + 1, kNumberDigits)))
    return std::nullopt;
  const std::optional<uint64_t> realtime = hex(rest.substr(kIdDigits + 2 + kNumberDigits));
  if (!realtime || *realtime > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*realtime);
}

std::vector<bool> outside_by_name(const std::vector<ListedFile>& files,
                                  std::optional<int64_t> since_us,
                                  std::optional<int64_t> until_us) {
  std::vector<bool> outside(files.size(), false);
  if (!since_us && !until_us) return outside;
  // Each NAME's archives: (first entry's time, index).
  std::map<std::string_view, std::vector<std::pair<int64_t, size_t>>> stems;
  for (size_t i = 0; i < files.size(); ++i) {
    if (const auto head = archive_head_realtime(files[i].path))
      stems[*archive_stem(files[i].path)].emplace_back(*head, i);
  }
  for (auto& [stem, archives] : stems) {
    std::sort(archives.begin(), archives.end());
    for (size_t k = 0; k < archives.size(); ++k) {
      const auto [head, i] = archives[k];
      if (until_us && head > *until_us) outside[i] = true;
      if (since_us && k + 1 < archives.size() && archives[k + 1].first < *since_us)
        outside[i] = true;
    }
  }
  return outside;
}

}  // namespace rdma_eventd_fleet
