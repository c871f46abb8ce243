// A private temporary directory, removed with everything in it when the object goes away. Paths
// are short (/tmp/rdma-test-XXXXXX) so a unix socket inside fits in sun_path.
#pragma once

#include <string>

namespace rdmatest {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "rdma-test", const std::string& base = "/tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes a file in the directory and returns its path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

// A base directory in memory (/dev/shm) when there is one, else /tmp: for directories that get
// many small files, like a simulator's sysfs tree.
std::string memory_tmp_base();

// The whole content of a file (HarnessError if it cannot be read).
std::string read_file(const std::string& path);

}  // namespace rdmatest
