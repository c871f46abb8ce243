// The kernel's own netlink bytes kept in tests/unit/data/ (captured by the kernel tests: see its
// README.md): each file a first comment line, then one message per line in hex.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace rdmatest {

// The messages of tests/unit/data/SUBDIR/NAME.hex, in the order the kernel sent them; none
// when the file cannot be read.
inline std::vector<std::vector<uint8_t>> captured_messages(const std::string& source_dir,
                                                           const std::string& subdir,
                                                           const std::string& name) {
  std::ifstream in(source_dir + "/tests/unit/data/" + subdir + "/" + name + ".hex");
  std::vector<std::vector<uint8_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<uint8_t> m;
    for (size_t i = 0; i + 1 < line.size(); i += 2)
      m.push_back(static_cast<uint8_t>(std::stoul(line.substr(i, 2), nullptr, 16)));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace rdmatest
