#include "sysfs_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "hung_fifo.h"
#include "rdma_eventd/internal/enum_names.h"
#include "throw_errno.h"

namespace rdmasim {
namespace {

namespace fs = std::filesystem;
using rdma_eventd::internal::enum_name;

void make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw std::system_error(ec, "cannot create " + path);
}

void create_file(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
  if (fd < 0) throw_errno("cannot write " + path);
  const ssize_t n = write(fd, content.data(), content.size());
  const int saved = errno;
  close(fd);
  if (n != static_cast<ssize_t>(content.size())) {
    errno = n < 0 ? saved : EIO;
    throw_errno("cannot write " + path);
  }
}

// Writes a file that readers may be looking at: through a temporary and a rename, so they see the
// old or the new value. In a directory nobody can see yet (staging), directly.
void write_file(const std::string& dir, const std::string& name, const std::string& content,
                bool staging = false) {
  const std::string path = dir + "/" + name;
  const std::string tmp = staging ? path : dir + "/." + name + ".tmp";
  create_file(tmp, content);
  if (!staging && rename(tmp.c_str(), path.c_str()) != 0) throw_errno("cannot rename to " + path);
}

void remove_file(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) throw_errno("cannot remove " + path);
}

__attribute__((format(printf, 1, 2))) std::string fmt(const char* format, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

const char* node_type_text(ibv_node_type t) {
  // Indexed by ibv_node_type: CA 1 ... unspecified 7.
  static constexpr std::array<const char*, 8> kNames = {
      "<unknown>", "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP", "unspecified"};
  return enum_name(kNames, t, "<unknown>");
}

std::string state_text(uint32_t state) {
  static constexpr std::array<const char*, 6> kNames = {"NOP",   "DOWN",   "INIT",
                                                        "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return fmt("%u: %s\n", state, enum_name(kNames, state, "<unknown>"));
}

std::string phys_state_text(uint32_t phys) {
  static constexpr std::array<const char*, 8> kNames = {
      "<unknown>",         "Sleep",   "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
      "LinkErrorRecovery", "Phy Test"};
  return fmt("%u: %s\n", phys, enum_name(kNames, phys, "<unknown>"));
}

// rate_show() (drivers/infiniband/core/sysfs.c; ib_port_attr_to_speed_info() in newer
// kernels): deci-Gb/s per lane times the lane count, e.g. "200 Gb/sec (4X HDR)", from the
// kernel's whole speed code: XDR (0x100) is "800 Gb/sec (4X XDR)" here, although it is 0 in
// ibv_port_attr's 8-bit active_speed.
std::string rate_text(uint32_t speed, uint8_t width) {
  struct LaneRate {
    uint32_t speed;
    int deci_gbps;
    const char* name;
  };
  // Any other speed code reads as SDR, as in the kernel.
  static constexpr LaneRate kRates[] = {
      {1, 25, " SDR"},    {2, 50, " DDR"},     {4, 100, " QDR"},
      {8, 100, " FDR10"}, {16, 140, " FDR"},   {32, 250, " EDR"},
      {64, 500, " HDR"},  {128, 1000, " NDR"}, {256, 2000, " XDR"}};
  const LaneRate* r = std::find_if(std::begin(kRates), std::end(kRates),
                                   [&](const LaneRate& l) { return l.speed == speed; });
  if (r == std::end(kRates)) r = &kRates[0];
  // The lane count leads the width's name ("4x"); "unknown" has none.
  const int lanes = std::atoi(width_name(width));
  if (lanes == 0)
    return "";  // the kernel fails the read with EINVAL; an empty value is the closest
  const int rate = r->deci_gbps * lanes;
  return fmt("%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "", lanes, r->name);
}

std::string port_dir(const std::string& dev_dir, int port) {
  return dev_dir + "/ports/" + std::to_string(port);
}

void remove_all_of(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw std::system_error(ec, "cannot remove " + path);
}

void write_port_files(const std::string& pdir, const Port& port, bool staging) {
  const ibv_port_attr& a = port.attr;
  write_file(pdir, "state", state_text(a.state), staging);
  write_file(pdir, "phys_state", phys_state_text(a.phys_state), staging);
  write_file(pdir, "lid", fmt("0x%x\n", a.lid), staging);
  write_file(pdir, "sm_lid", fmt("0x%x\n", a.sm_lid), staging);
  write_file(pdir, "sm_sl", fmt("%u\n", a.sm_sl), staging);
  write_file(pdir, "lid_mask_count", fmt("%u\n", a.lmc), staging);
  write_file(pdir, "cap_mask", fmt("0x%08x\n", a.port_cap_flags), staging);
  write_file(pdir, "rate", rate_text(port.speed, a.active_width), staging);
  write_file(pdir, "link_layer",
             a.link_layer == IBV_LINK_LAYER_ETHERNET     ? "Ethernet\n"
             : a.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand\n"
                                                         : "Unknown\n",
             staging);
}

void write_gid_files(const std::string& pdir, const Gid& g, int index, bool staging) {
  const std::string name = std::to_string(index);
  // An empty slot reads as the zero GID (the kernel keeps that for old tools).
  write_file(pdir + "/gids", name, gid_to_sysfs(g.valid ? g.raw : std::array<uint8_t, 16>{}) + "\n",
             staging);
  if (g.valid)
    write_file(pdir + "/gid_attrs/types", name,
               g.type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2\n" : "IB/RoCE v1\n", staging);
  else if (!staging)
    remove_file(pdir + "/gid_attrs/types/" + name);
  if (g.valid && !g.netdev.empty())
    write_file(pdir + "/gid_attrs/ndevs", name, g.netdev + "\n", staging);
  else if (!staging)
    remove_file(pdir + "/gid_attrs/ndevs/" + name);
}

// What stands at a counter's path: a file with its text, an empty directory (unreadable: it
// opens, and its read fails with EISDIR), a FIFO nobody writes (hang: its open blocks), or
// nothing (missing).
struct Entry {
  enum Kind : uint8_t { kAbsent, kFile, kDir, kFifo };
  Kind kind;
  std::string text;  // kFile's
};

// A counter's value as show_pma_counter() and show_hw_stats() print it.
std::string value_text(const Counter& c) {
  return fmt("%llu\n", static_cast<unsigned long long>(c.value));
}

Entry counter_entry(const Counter& c) {
  switch (c.fault) {
    case CounterFault::kNone:
      return {Entry::kFile, value_text(c)};
    case CounterFault::kEmpty:
      return {Entry::kFile, ""};
    case CounterFault::kGarbage:
      return {Entry::kFile, kGarbageText};
    case CounterFault::kUnreadable:
      return {Entry::kDir, ""};
    case CounterFault::kHang:
      return {Entry::kFifo, ""};
    case CounterFault::kMissing:
      break;
  }
  return {Entry::kAbsent, ""};
}

// Creates the entry at a path where there is none.
void make_entry(const std::string& path, const Entry& e) {
  // The FIFO is writable by its owner: the simulator opens its write end to let readers go.
  if ((e.kind == Entry::kDir && mkdir(path.c_str(), 0755) != 0) ||
      (e.kind == Entry::kFifo && mkfifo(path.c_str(), 0644) != 0))
    throw_errno("cannot create " + path);
  if (e.kind == Entry::kFile) create_file(path, e.text);
}

// Puts the entry at dir/name in one step for readers: built beside it and renamed over it, or
// exchanged with it where a directory replaces a file or FIFO or the reverse (rename cannot),
// then the old one removed; kAbsent removes what is there.
void replace_entry(const std::string& dir, const std::string& name, const Entry& e) {
  const std::string path = dir + "/" + name;
  if (e.kind == Entry::kAbsent) {
    remove_all_of(path);
    return;
  }
  const std::string tmp = dir + "/." + name + ".tmp";
  remove_all_of(tmp);
  make_entry(tmp, e);
  if (rename(tmp.c_str(), path.c_str()) == 0) return;
  if (errno != EISDIR && errno != ENOTDIR) throw_errno("cannot rename to " + path);
  if (renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_EXCHANGE) == 0) {
    remove_all_of(tmp);  // the old entry
    return;
  }
  // A file system without RENAME_EXCHANGE: readers find no entry for a moment.
  if (errno != EINVAL) throw_errno("cannot exchange " + tmp + " and " + path);
  remove_all_of(path);
  if (rename(tmp.c_str(), path.c_str()) != 0) throw_errno("cannot rename to " + path);
}

// The counters/ and hw_counters/ groups of a port being staged. hw_counters/ also has
// `lifespan`, how long the kernel caches the driver's values: 10 ms by default.
void stage_counters(const std::string& pdir, const Port& port) {
  bool pma = false, hw = false;
  for (const Counter& c : port.counters) {
    pma |= c.group == CounterGroup::kPma;
    hw |= c.group == CounterGroup::kHw;
  }
  if (pma) make_dirs(pdir + "/counters");
  if (hw) {
    make_dirs(pdir + "/hw_counters");
    write_file(pdir + "/hw_counters", "lifespan", "10\n", true);
  }
  for (const Counter& c : port.counters)
    make_entry(pdir + "/" + c.path(), counter_entry(c));
}

}  // namespace

std::string SysfsTree::device_dir(const std::string& name) const {
  return root_ + "/class/infiniband/" + name;
}

void SysfsTree::reset() {
  // A simulator that ended without removing its tree (killed) left its hung counters' FIFOs,
  // and maybe readers blocked on them: they are let go, with end of file (the value is lost).
  {
    FifoRelease release;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec))
      if (it->symlink_status(ec).type() == fs::file_type::fifo)
        release.add(it->path().string(), "");
    remove_all();
  }
  make_dirs(root_ + "/class/infiniband");
  make_dirs(root_ + "/class/infiniband_verbs");
  write_file(root_ + "/class/infiniband_verbs", "abi_version", "6\n");
}

void SysfsTree::remove_all() {
  FifoRelease release;
  take_hung("", release);
  std::error_code ec;
  fs::remove_all(root_, ec);
  if (ec) throw std::system_error(ec, "cannot remove " + root_);
}

void SysfsTree::add_pci_function(const std::string& function, const std::string& driver) {
  const std::string dir = root_ + "/devices/pci0000:00/" + function;
  if (access(dir.c_str(), F_OK) == 0) return;
  make_dirs(dir);
  make_dirs(root_ + "/bus/pci/devices");
  const std::string driver_dir = root_ + "/bus/pci/drivers/" + driver;
  make_dirs(driver_dir);
  // Relative links, as sysfs has them: they stay right wherever the tree is.
  if (symlink("../../../bus/pci", (dir + "/subsystem").c_str()) != 0)
    throw_errno("cannot link " + dir + "/subsystem");
  if (symlink(("../../../bus/pci/drivers/" + driver).c_str(), (dir + "/driver").c_str()) != 0)
    throw_errno("cannot link " + dir + "/driver");
  const std::string back = root_ + "/bus/pci/devices/" + function;
  if (symlink(("../../../devices/pci0000:00/" + function).c_str(), back.c_str()) != 0)
    throw_errno("cannot link " + back);
  const std::string bound = driver_dir + "/" + function;
  if (symlink(("../../../../devices/pci0000:00/" + function).c_str(), bound.c_str()) != 0)
    throw_errno("cannot link " + bound);
}

void SysfsTree::add_device(const DeviceModel& d, uint32_t uverbs) {
  // Built in a hidden staging directory and renamed into place: the device appears complete.
  const std::string final_dir = device_dir(d.name);
  const std::string dir = root_ + "/class/.new-" + d.name;
  remove_all_of(dir);
  make_dirs(dir);
  const std::string sub = d.parent_subdir().empty() ? "" : "/" + d.parent_subdir();
  if (!d.pci_function.empty() &&
      symlink(("../../../devices/pci0000:00/" + d.pci_function + sub).c_str(),
              (dir + "/device").c_str()) != 0)
    throw_errno("cannot link " + dir + "/device");
  write_file(dir, "node_guid", guid_to_string(d.node_guid) + "\n", true);
  write_file(dir, "sys_image_guid", guid_to_string(d.sys_image_guid) + "\n", true);
  write_file(dir, "node_type",
             fmt("%d: %s\n", static_cast<int>(d.node_type), node_type_text(d.node_type)), true);
  write_file(dir, "fw_ver", d.fw_ver + "\n", true);
  write_file(dir, "board_id", d.board_id + "\n", true);
  write_file(dir, "hca_type", d.hca_type + "\n", true);
  write_file(dir, "node_desc", d.node_desc + "\n", true);
  for (size_t p = 1; p <= d.ports.size(); ++p) {
    const std::string pdir = port_dir(dir, static_cast<int>(p));
    make_dirs(pdir + "/gids");
    make_dirs(pdir + "/pkeys");
    make_dirs(pdir + "/gid_attrs/types");
    make_dirs(pdir + "/gid_attrs/ndevs");
    write_port_files(pdir, d.ports[p - 1], true);
    const Port& port = d.ports[p - 1];
    for (size_t i = 0; i < port.gids.size(); ++i)
      write_gid_files(pdir, port.gids[i], static_cast<int>(i), true);
    for (size_t i = 0; i < port.pkeys.size(); ++i)
      write_file(pdir + "/pkeys", std::to_string(i), fmt("0x%04x\n", port.pkeys[i]), true);
    stage_counters(pdir, port);
  }
  if (rename(dir.c_str(), final_dir.c_str()) != 0)
    throw_errno("cannot rename " + dir + " to " + final_dir);
  for (size_t p = 1; p <= d.ports.size(); ++p)
    for (const Counter& c : d.ports[p - 1].counters)
      if (c.fault == CounterFault::kHang)
        hung_[port_dir(final_dir, static_cast<int>(p)) + "/" + c.path()] = value_text(c);

  const std::string ustage = root_ + "/class/.new-uverbs" + std::to_string(uverbs);
  const std::string udir = root_ + "/class/infiniband_verbs/uverbs" + std::to_string(uverbs);
  remove_all_of(ustage);
  make_dirs(ustage);
  write_file(ustage, "ibdev", d.name + "\n", true);
  write_file(ustage, "abi_version", "1\n", true);
  // The uverbs char device: major 231, minors from 192 (IB_UVERBS_BASE_MINOR).
  write_file(ustage, "dev", fmt("231:%u\n", 192 + uverbs), true);
  if (rename(ustage.c_str(), udir.c_str()) != 0)
    throw_errno("cannot rename " + ustage + " to " + udir);
}

void SysfsTree::write_port(const DeviceModel& d, int port) {
  write_port_files(port_dir(device_dir(d.name), port), d.ports[port - 1], false);
}

void SysfsTree::write_gid(const DeviceModel& d, int port, int index) {
  write_gid_files(port_dir(device_dir(d.name), port), d.ports[port - 1].gids[index], index, false);
}

void SysfsTree::write_pkey(const DeviceModel& d, int port, int index) {
  const std::string pdir = port_dir(device_dir(d.name), port);
  write_file(pdir + "/pkeys", std::to_string(index),
             fmt("0x%04x\n", d.ports[port - 1].pkeys[index]));
}

void SysfsTree::write_counter(const DeviceModel& d, int port, const Counter& c) {
  const std::string dir = port_dir(device_dir(d.name), port) + "/" + group_dir(c.group);
  const std::string path = dir + "/" + c.name;
  const auto hung = hung_.find(path);
  if (c.fault == CounterFault::kHang) {
    // The FIFO stays while the counter counts: its readers are to read the value it got to.
    if (hung == hung_.end()) replace_entry(dir, c.name, counter_entry(c));
    hung_[path] = value_text(c);
    return;
  }
  // The FIFO's readers read the value once the new entry has replaced it.
  FifoRelease release;
  if (hung != hung_.end()) {
    release.add(path, value_text(c));
    hung_.erase(hung);
  }
  replace_entry(dir, c.name, counter_entry(c));
}

void SysfsTree::take_hung(const std::string& prefix, FifoRelease& release) {
  for (auto it = hung_.lower_bound(prefix); it != hung_.end() && it->first.starts_with(prefix);) {
    release.add(it->first, it->second);
    it = hung_.erase(it);
  }
}

void SysfsTree::remove_uverbs(uint32_t uverbs) {
  std::error_code ec;
  fs::remove_all(root_ + "/class/infiniband_verbs/uverbs" + std::to_string(uverbs), ec);
  if (ec) throw std::system_error(ec, "cannot remove uverbs" + std::to_string(uverbs));
}

void SysfsTree::remove_device(const std::string& name) {
  // Rename first so a reader never sees a half-removed directory, then delete at leisure.
  const std::string dir = device_dir(name);
  const std::string doomed = root_ + "/class/.removed-" + name;
  FifoRelease release;  // the device's hung counters: their readers read the values
  take_hung(dir + "/", release);
  if (rename(dir.c_str(), doomed.c_str()) != 0 && errno != ENOENT)
    throw_errno("cannot remove " + dir);
  std::error_code ec;
  fs::remove_all(doomed, ec);
  if (ec) throw std::system_error(ec, "cannot remove " + doomed);
}

void SysfsTree::rename_device(const std::string& old_name, const std::string& new_name,
                              uint32_t uverbs) {
  const std::string from = device_dir(old_name);
  const std::string to = device_dir(new_name);
  if (rename(from.c_str(), to.c_str()) != 0) throw_errno("cannot rename " + from + " to " + to);
  // The hung counters' FIFOs moved with the directory.
  std::map<std::string, std::string> moved;
  for (auto it = hung_.lower_bound(from + "/");
       it != hung_.end() && it->first.starts_with(from + "/");) {
    moved[to + it->first.substr(from.size())] = std::move(it->second);
    it = hung_.erase(it);
  }
  hung_.merge(moved);
  write_file(root_ + "/class/infiniband_verbs/uverbs" + std::to_string(uverbs), "ibdev",
             new_name + "\n");
}

}  // namespace rdmasim
