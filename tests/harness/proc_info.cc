#include "proc_info.h"

#include <dirent.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "process.h"

namespace rdmatest {
namespace {

std::string status_field(const std::string& path, const std::string& field) {
  std::ifstream in(path);
  if (!in) throw HarnessError("cannot read " + path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  }
  throw HarnessError(path + " has no " + field);
}

// The names in a /proc directory, "." and ".." left out.
std::vector<std::string> entries(const std::string& path) {
  DIR* d = opendir(path.c_str());
  if (!d) throw HarnessError("cannot list " + path);
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  closedir(d);
  return names;
}

}  // namespace

size_t open_fds(pid_t pid) {
  return entries("/proc/" + std::to_string(pid) + "/fd").size();
}

size_t thread_count(pid_t pid) {
  return entries("/proc/" + std::to_string(pid) + "/task").size();
}

uint64_t all_threads_wakeups(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task/";
  uint64_t sum = 0;
  for (const std::string& tid : entries(tasks))
    sum += std::stoull(status_field(tasks + tid + "/status", "voluntary_ctxt_switches"));
  return sum;
}

uint64_t status_bytes(pid_t pid, const std::string& field) {
  std::istringstream value(status_field("/proc/" + std::to_string(pid) + "/status", field));
  uint64_t kb = 0;
  std::string unit;
  value >> kb >> unit;
  if (unit != "kB") throw HarnessError(field + " is not in kB");
  return kb * 1024;
}

uint64_t main_thread_wakeups(pid_t pid) {
  const std::string p = std::to_string(pid);
  return std::stoull(
      status_field("/proc/" + p + "/task/" + p + "/status", "voluntary_ctxt_switches"));
}

uint64_t cpu_ticks(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  std::ifstream f(path);
  if (!f) throw HarnessError("cannot read " + path);
  const std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // After the command's name in parentheses (which may hold spaces): field 3 on, utime is 14
  // and stime 15.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

}  // namespace rdmatest
