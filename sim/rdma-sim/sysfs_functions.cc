// What a PCI function's driver puts under it in sysfs besides the RDMA device
// (docs/simulator.md, "mlx5's sysfs and devlink layout"): the netdevs of its Ethernet ports
// (register_netdevice: the netdev's parent is the function, SET_NETDEV_DEV(netdev,
// mdev->device)) and mlx5's auxiliary devices, children of the function (add_adev in
// drivers/net/ethernet/mellanox/mlx5/core/dev.c: adev->dev.parent = mdev->device).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "sysfs_tree.h"
#include "throw_errno.h"

namespace rdmasim {
namespace {

namespace fs = std::filesystem;

void dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw std::system_error(ec, "cannot create " + path);
}

// A relative link, as sysfs has them; one already there is replaced.
void link_to(const std::string& target, const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) throw_errno("cannot remove " + path);
  if (symlink(target.c_str(), path.c_str()) != 0) throw_errno("cannot link " + path);
}

void drop(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw std::system_error(ec, "cannot remove " + path);
}

void text_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::FILE* f = std::fopen(tmp.c_str(), "we");
    if (!f) throw_errno("cannot write " + tmp);
    std::fputs(text.c_str(), f);
    if (std::fclose(f) != 0) throw_errno("cannot write " + tmp);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) throw_errno("cannot rename to " + path);
}

}  // namespace

std::string SysfsTree::function_dir(const std::string& function) const {
  return root_ + "/devices/pci0000:00/" + function;
}

void SysfsTree::add_netdev(const std::string& function, const std::string& netdev,
                           uint32_t ifindex) {
  // devices/pci0000:00/<fn>/net/<netdev>, with class/net/<netdev> leading to it.
  const std::string dir = function_dir(function) + "/net/" + netdev;
  dirs(dir);
  text_file(dir + "/ifindex", std::to_string(ifindex) + "\n");
  link_to("../../../" + function, dir + "/device");
  link_to("../../../../../class/net", dir + "/subsystem");
  dirs(root_ + "/class/net");
  link_to("../../devices/pci0000:00/" + function + "/net/" + netdev,
          root_ + "/class/net/" + netdev);
}

void SysfsTree::remove_netdev(const std::string& function, const std::string& netdev) {
  drop(root_ + "/class/net/" + netdev);
  drop(function_dir(function) + "/net/" + netdev);
}

void SysfsTree::add_aux_device(const std::string& function, const std::string& name,
                               const std::string& driver) {
  // devices/pci0000:00/<fn>/<name>, on bus/auxiliary and bound to its driver.
  const std::string dir = function_dir(function) + "/" + name;
  dirs(dir);
  dirs(root_ + "/bus/auxiliary/devices");
  const std::string driver_dir = root_ + "/bus/auxiliary/drivers/" + driver;
  dirs(driver_dir);
  link_to("../../../../bus/auxiliary", dir + "/subsystem");
  link_to("../../../../bus/auxiliary/drivers/" + driver, dir + "/driver");
  link_to("../../../devices/pci0000:00/" + function + "/" + name,
          root_ + "/bus/auxiliary/devices/" + name);
  link_to("../../../../devices/pci0000:00/" + function + "/" + name, driver_dir + "/" + name);
}

void SysfsTree::remove_aux_device(const std::string& function, const std::string& name,
                                  const std::string& driver) {
  drop(root_ + "/bus/auxiliary/drivers/" + driver + "/" + name);
  drop(root_ + "/bus/auxiliary/devices/" + name);
  drop(function_dir(function) + "/" + name);
}

void SysfsTree::add_bond(const std::string& bond, uint32_t ifindex,
                         const std::vector<std::pair<std::string, std::string>>& lowers) {
  // The bonding driver's netdev is virtual: devices/virtual/net/<bond>, no `device` link; its
  // slaves are its lower devices (netdev_upper_dev_link: lower_<name> and upper_<name>).
  const std::string dir = root_ + "/devices/virtual/net/" + bond;
  dirs(dir);
  text_file(dir + "/ifindex", std::to_string(ifindex) + "\n");
  link_to("../../../../class/net", dir + "/subsystem");
  for (const auto& [function, netdev] : lowers) {
    link_to("../../../pci0000:00/" + function + "/net/" + netdev, dir + "/lower_" + netdev);
    link_to("../../../../virtual/net/" + bond,
            function_dir(function) + "/net/" + netdev + "/upper_" + bond);
  }
  dirs(root_ + "/class/net");
  link_to("../../devices/virtual/net/" + bond, root_ + "/class/net/" + bond);
}

void SysfsTree::remove_bond(const std::string& bond) {
  drop(root_ + "/class/net/" + bond);
  drop(root_ + "/devices/virtual/net/" + bond);
}

}  // namespace rdmasim
