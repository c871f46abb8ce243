#include "sim_control.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "common/protocol.h"
#include "common/shm_layout.h"

namespace rdma_eventd::bench {

using nlohmann::json;

int64_t SimControl::Request::send(const json& req) {
  const std::string line = req.dump() + "\n";
  const int64_t t = mono_ns();
  write_all(fd_.get(), line);
  return t;
}

json SimControl::Request::reply(int timeout_ms) {
  const std::string line = read_line(fd_.get(), carry_, timeout_ms);
  json r = json::parse(line);
  if (!r.value("ok", false))
    throw BenchError("the simulator refused the request: " + r.value("error", line));
  return r;
}

SimControl::Request SimControl::connect() const {
  return Request(connect_unix(dir_ + "/" + rdmasim::kSocketFile));
}

json SimControl::request(const json& req) const {
  Request r = connect();
  r.send(req);
  return r.reply();
}

json SimControl::storm(uint64_t count, const std::vector<std::string>& targets) {
  json req = {{"cmd", "storm"}, {"count", count}};
  if (!targets.empty()) req["targets"] = targets;
  return req;
}

json SimControl::devx_storm(uint64_t count, const std::vector<std::string>& devices) {
  json req = {{"cmd", "devx_storm"}, {"count", count}};
  if (!devices.empty()) req["devices"] = devices;
  return req;
}

json SimControl::event(const std::string& target, uint32_t type) {
  return {{"cmd", "event"}, {"target", target}, {"type", type}};
}

json SimControl::devlink_report(const std::string& device, const std::string& reporter) {
  return {{"cmd", "devlink"}, {"action", "report"}, {"target", device}, {"reporter", reporter}};
}

SimState::SimState(const std::string& dir) {
  const std::string path = dir + "/" + rdmasim::kStateFile;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw BenchError(errno_text("open " + path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) throw BenchError(errno_text("stat " + path));
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < sizeof(rdmasim::ShmFabric))
    throw BenchError(path + " is smaller than the layout this program knows");
  void* p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) throw BenchError(errno_text("mmap " + path));
  fabric_ = static_cast<const rdmasim::ShmFabric*>(p);
  const rdmasim::ShmHeader& h = fabric_->header;
  if (std::memcmp(h.magic, rdmasim::kShmMagic, sizeof h.magic) != 0 ||
      h.version != rdmasim::kShmVersion || h.context_size != sizeof(rdmasim::ShmContext)) {
    munmap(p, size_);
    throw BenchError(path + ": not a state file of this simulator's layout version");
  }
}

SimState::~SimState() {
  if (fabric_) munmap(const_cast<rdmasim::ShmFabric*>(fabric_), size_);
}

std::vector<int> SimState::slots(const std::vector<pid_t>& pids) const {
  std::vector<int> found;
  for (int i = 0; i < rdmasim::kMaxContexts; ++i) {
    const rdmasim::ShmContext& ctx = fabric_->contexts[i];
    if (rdmasim::load_relaxed(ctx.id) == 0) continue;
    const pid_t pid = rdmasim::load_relaxed(ctx.pid);
    if (std::find(pids.begin(), pids.end(), pid) != pids.end()) found.push_back(i);
  }
  return found;
}

SimState::Counters SimState::sum(const std::vector<int>& slots) const {
  Counters c;
  for (int i : slots) {
    const rdmasim::ShmContext& ctx = fabric_->contexts[i];
    ++c.contexts;
    for (size_t k = 0; k < std::size(kCountedCalls); ++k)
      c.calls[k] += rdmasim::load_relaxed(ctx.*kCountedCalls[k].count);
  }
  return c;
}

uint32_t SimState::query_latency_us() const {
  return rdmasim::load_relaxed(fabric_->header.query_latency_us);
}

}  // namespace rdma_eventd::bench
