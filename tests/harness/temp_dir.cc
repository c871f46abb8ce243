#include "temp_dir.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "process.h"

namespace rdmatest {

TempDir::TempDir(const std::string& prefix, const std::string& base) {
  std::string tmpl = base + "/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw HarnessError("mkdtemp " + tmpl + ": " + strerror(errno));
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& content) const {
  const std::string p = file(name);
  std::ofstream out(p);
  out << content;
  if (!out) throw HarnessError("cannot write " + p);
  return p;
}

std::string memory_tmp_base() {
  return access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw HarnessError("cannot read " + path + ": " + strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rdmatest
