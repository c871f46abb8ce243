#include "devlink/sysfs_handles.h"

#include <climits>
#include <cstdlib>
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

// The device at `link` (a sysfs "device" link) and its ancestors up to `devices` (the sysfs
// root's devices/), each as a devlink handle: its bus (subsystem) and its name.
void add_chain(const std::string& link, const std::string& devices, std::vector<std::string>& out) {
  std::string dir = real_path(link);
  while (dir.size() > devices.size() && dir.compare(0, devices.size(), devices) == 0) {
    const std::string bus = base_name(real_path(dir + "/subsystem"));
    // Only bus devices name a devlink instance; a class device (net, infiniband) does not.
    if (!bus.empty() && real_path(dir + "/subsystem").find("/bus/") != std::string::npos)
      out.push_back(bus + "/" + base_name(dir));
    dir.resize(dir.rfind('/'));
  }
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
  add_chain(ibdev_path + "/device", devices, h.device_handles);
  for (uint32_t p = 1; p <= h.ports; ++p) {
    // The netdev of the port's first GID (RoCE; rxe); an InfiniBand port has none.
    const std::string file = ibdev_path + "/ports/" + std::to_string(p) + "/gid_attrs/ndevs/0";
    const internal::SmallFile f = internal::read_small_file(file, 256);
    if (!f.ok()) continue;
    std::string ndev = f.text;
    while (!ndev.empty() && (ndev.back() == '\n' || ndev.back() == ' '))
      ndev.pop_back();
    if (ndev.empty() || ndev.find('/') != std::string::npos) continue;
    std::vector<std::string> chain;
    add_chain(root + "/class/net/" + ndev + "/device", devices, chain);
    if (!chain.empty()) h.port_handles[p] = std::move(chain);
  }
  return h;
}

}  // namespace rdma_eventd::daemon
