#include "devlink/sysfs_handles.h"

#include <dirent.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "rdma_eventd/internal/small_file.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {
namespace {

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

std::string base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The handle (bus/name) of the device at `dir` when it is a bus device; "" for a class device
// (net, infiniband), which names no devlink instance.
std::string bus_handle(const std::string& dir) {
  const std::string subsystem = real_path(dir + "/subsystem");
  if (subsystem.find("/bus/") == std::string::npos) return {};
  return base_name(subsystem) + "/" + base_name(dir);
}

// The nearest bus device at or above `link` (a sysfs "device" link), within `devices` (the
// sysfs root's devices/): its directory, or "" for none.
std::string nearest_bus_device(const std::string& link, const std::string& devices) {
  std::string dir = real_path(link);
  while (dir.size() > devices.size() && dir.compare(0, devices.size(), devices) == 0) {
    if (!bus_handle(dir).empty()) return dir;
    dir.resize(dir.rfind('/'));
  }
  return {};
}

// The bus devices right below `dir` that are no RDMA device's or netdev's parent: mlx5's
// auxiliary devices mlx5_core.eth.N and mlx5_core.rdma.N under their PCI function. A scalable
// function's auxiliary device, the parent of its own RDMA device, is not one of them.
void add_children(const std::string& dir, std::vector<std::string>& out) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name == "subsystem" || name == "driver") continue;
    const std::string child = dir + "/" + name;
    if (e->d_type != DT_DIR && !(e->d_type == DT_UNKNOWN && is_dir(child))) continue;
    if (is_dir(child + "/infiniband") || is_dir(child + "/net")) continue;
    const std::string handle = bus_handle(child);
    if (!handle.empty()) out.push_back(handle);
  }
}

void add_unique(std::vector<std::string>& v, std::string s) {
  for (const std::string& x : v)
    if (x == s) return;
  v.push_back(std::move(s));
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// A netdev's lower netdevs (a bond's members): its lower_NAME links.
std::vector<std::string> lower_netdevs(const std::string& netdev_dir) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(netdev_dir.c_str()), ::closedir);
  if (!d) return out;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view name = e->d_name;
    if (name.starts_with("lower_") && name.size() > 6) out.emplace_back(name.substr(6));
  }
  return out;
}

}  // namespace

DevlinkHandles read_devlink_handles(const std::string& ibdev_path, const DeviceView& view) {
  DevlinkHandles h;
  h.device = view.name;
  h.node_guid = format_guid(view.node_guid);
  h.ports = view.num_ports();
  // ibdev_path is <root>/class/infiniband/<name>.
  const size_t cls = ibdev_path.rfind("/class/infiniband/");
  if (cls == std::string::npos) return h;
  const std::string root = ibdev_path.substr(0, cls);
  const std::string devices = real_path(root + "/devices");
  if (devices.empty()) return h;
  if (const std::string own = nearest_bus_device(ibdev_path + "/device", devices); !own.empty()) {
    h.own = bus_handle(own);
    add_children(own, h.own_children);
  }
  for (uint32_t p = 1; p <= h.ports; ++p) {
    // The netdev of the port's first GID (RoCE; rxe); an InfiniBand port has none.
    const std::string file = ibdev_path + "/ports/" + std::to_string(p) + "/gid_attrs/ndevs/0";
    const internal::SmallFile f = internal::read_small_file(file, 256);
    if (!f.ok()) continue;
    const std::string ndev = trimmed(f.text);
    if (ndev.empty() || ndev.find('/') != std::string::npos || ndev[0] == '.') continue;
    PortDevlinkLinks links;
    links.netdevs.push_back(ndev);
    for (std::string& lower : lower_netdevs(root + "/class/net/" + ndev))
      add_unique(links.netdevs, std::move(lower));
    for (const std::string& n : links.netdevs) {
      const std::string fn = nearest_bus_device(root + "/class/net/" + n + "/device", devices);
      if (fn.empty()) continue;  // a bond: virtual, no device
      add_unique(links.handles, bus_handle(fn));
      std::vector<std::string> children;
      add_children(fn, children);
      for (std::string& c : children)
        add_unique(links.handles, std::move(c));
    }
    h.port_links[p] = std::move(links);
  }
  return h;
}

}  // namespace rdma_eventd::daemon
