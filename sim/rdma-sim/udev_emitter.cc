#include "udev_emitter.h"

#include <endian.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace rdmasim {
namespace {

constexpr uint32_t kUdevGroup = 2;  // 1 is the kernel's own uevents
constexpr uint32_t kMagic = 0xfeedcafe;
constexpr uint32_t kUverbsMajor = 231;
constexpr uint32_t kUverbsBaseMinor = 192;

// The header systemd-udevd puts before the properties (sd-device-monitor's
// monitor_netlink_header). Magic and hashes are in network order, the rest in host order.
struct MonitorHeader {
  char prefix[8];
  uint32_t magic;
  uint32_t header_size;
  uint32_t properties_off;
  uint32_t properties_len;
  uint32_t filter_subsystem_hash;
  uint32_t filter_devtype_hash;
  uint32_t filter_tag_bloom_hi;
  uint32_t filter_tag_bloom_lo;
};
static_assert(sizeof(MonitorHeader) == 40);

// A network namespace of its own, as `unshare --net` makes it: no interface but loopback. The
// system's namespace (and a container's) has others; and where PID 1's namespace can be seen,
// it must not be that one.
std::string shared_namespace_reason() {
  struct stat self {
  }, init{};
  if (stat("/proc/self/ns/net", &self) == 0 && stat("/proc/1/ns/net", &init) == 0 &&
      self.st_dev == init.st_dev && self.st_ino == init.st_ino) {
    return "this is PID 1's network namespace";
  }
  struct if_nameindex* names = if_nameindex();
  if (!names) return std::string("cannot list network interfaces: ") + std::strerror(errno);
  std::string others;
  for (const struct if_nameindex* n = names; n->if_index != 0; ++n) {
    if (std::strcmp(n->if_name, "lo") != 0)
      others += (others.empty() ? "" : ", ") + std::string(n->if_name);
  }
  if_freenameindex(names);
  return others.empty() ? "" : "this network namespace has interfaces (" + others + ")";
}

uint64_t monotonic_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000 + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

}  // namespace

uint32_t murmur_hash2(const std::string& text) {
  constexpr uint32_t m = 0x5bd1e995;
  constexpr int r = 24;
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  size_t len = text.size();
  uint32_t h = static_cast<uint32_t>(len);  // seed 0
  while (len >= 4) {
    uint32_t k;
    std::memcpy(&k, data, 4);  // native order, as udev reads it
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
    data += 4;
    len -= 4;
  }
  switch (len) {
    case 3:
      h ^= static_cast<uint32_t>(data[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= static_cast<uint32_t>(data[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= data[0];
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

UdevEmitter::UdevEmitter() {
  if (geteuid() != 0) {
    throw std::runtime_error("--udev needs root: libudev accepts udev messages only from uid 0");
  }
  if (const std::string why = shared_namespace_reason(); !why.empty()) {
    throw std::runtime_error("--udev: " + why +
                             ": every udev client in it would get the simulated devices' "
                             "messages; run the simulator in a network namespace of its own "
                             "(unshare --net)");
  }
  sock_.reset(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
  if (!sock_) {
    throw std::runtime_error(std::string("--udev: cannot open a uevent netlink socket: ") +
                             std::strerror(errno));
  }
  // Start the sequence numbers where a booted system would be, well away from 0 (libudev
  // refuses a message without SEQNUM or with SEQNUM=0).
  seqnum_ = 4000;
}

std::string UdevEmitter::parent_path(const DeviceModel& device) {
  // A device without a parent (rxe, siw) is a virtual one, as are its uverbs nodes.
  if (device.pci_function.empty()) return "/devices/virtual";
  const std::string sub = device.parent_subdir();
  return "/devices/pci0000:00/" + device.pci_function + (sub.empty() ? "" : "/" + sub);
}

UdevEmitter::Properties UdevEmitter::uverbs_properties(uint32_t uverbs) {
  return {{"DEVNAME", "/dev/infiniband/uverbs" + std::to_string(uverbs)},
          {"MAJOR", std::to_string(kUverbsMajor)},
          {"MINOR", std::to_string(kUverbsBaseMinor + uverbs)}};
}

void UdevEmitter::ib_device_added(const DeviceModel& device, int32_t) {
  send("add", "infiniband", parent_path(device) + "/infiniband/" + device.name,
       {{"NAME", device.name}});
}

void UdevEmitter::uverbs_added(const DeviceModel& device, uint32_t uverbs) {
  send("add", "infiniband_verbs",
       parent_path(device) + "/infiniband_verbs/uverbs" + std::to_string(uverbs),
       uverbs_properties(uverbs));
}

void UdevEmitter::uverbs_removed(const DeviceModel& device, uint32_t uverbs) {
  send("remove", "infiniband_verbs",
       parent_path(device) + "/infiniband_verbs/uverbs" + std::to_string(uverbs),
       uverbs_properties(uverbs));
}

void UdevEmitter::ib_device_removed(const DeviceModel& device, int32_t) {
  send("remove", "infiniband", parent_path(device) + "/infiniband/" + device.name,
       {{"NAME", device.name}});
}

void UdevEmitter::ib_device_renamed(const std::string& old_name, const DeviceModel& device,
                                    int32_t /*index*/) {
  const std::string parent = parent_path(device);
  send("move", "infiniband", parent + "/infiniband/" + device.name,
       {{"DEVPATH_OLD", parent + "/infiniband/" + old_name}, {"NAME", device.name}});
}

void UdevEmitter::send(const std::string& action, const std::string& subsystem,
                       const std::string& devpath, Properties extra) {
  Properties props = {{"ACTION", action},
                      {"DEVPATH", devpath},
                      {"SUBSYSTEM", subsystem},
                      {"SEQNUM", std::to_string(++seqnum_)},
                      {"USEC_INITIALIZED", std::to_string(monotonic_us())}};
  props.insert(props.end(), extra.begin(), extra.end());
  std::string body;
  for (const auto& [key, value] : props) {
    body += key;
    body += '=';
    body += value;
    body += '\0';
  }

  MonitorHeader h{};
  std::memcpy(h.prefix, "libudev", 8);
  h.magic = htobe32(kMagic);
  h.header_size = sizeof h;
  h.properties_off = sizeof h;
  h.properties_len = static_cast<uint32_t>(body.size());
  h.filter_subsystem_hash = htobe32(murmur_hash2(subsystem));
  iovec iov[2] = {{&h, sizeof h}, {body.data(), body.size()}};
  sockaddr_nl to{};
  to.nl_family = AF_NETLINK;
  to.nl_groups = kUdevGroup;
  msghdr msg{};
  msg.msg_name = &to;
  msg.msg_namelen = sizeof to;
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  if (sendmsg(sock_.get(), &msg, 0) < 0 && errno != ECONNREFUSED && errno != ESRCH) {
    // Nobody listening is not an error (the kernel says ECONNREFUSED or ESRCH then).
    if (!error_logged_) {
      std::fprintf(stderr, "rdma-sim: sending a udev message failed: %s\n", std::strerror(errno));
      error_logged_ = true;
    }
    return;
  }
  ++sent_;
}

}  // namespace rdmasim
