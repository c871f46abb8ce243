#include "verbs/verbs.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <endian.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/limits.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "rdma_eventd/internal/small_file.h"

namespace rdma_eventd::daemon::verbs {
namespace {

// "" when it cannot be read. A sysfs attribute is at most a page.
std::string read_sysfs_line(const std::string& path) {
  std::string s = internal::read_small_file(path, 4096).text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// The driver of the device's parent: the last part of the device/driver link ("mlx5_core"), ""
// for a device without a parent (rxe, siw) or one whose link cannot be read.
std::string parent_driver(const std::string& ibdev_path) {
  char target[PATH_MAX];
  const ssize_t n = readlink((ibdev_path + "/device/driver").c_str(), target, sizeof target - 1);
  if (n <= 0) return {};
  const std::string_view link(target, static_cast<size_t>(n));
  const size_t slash = link.rfind('/');
  return std::string(slash == std::string_view::npos ? link : link.substr(slash + 1));
}

// <sysfs>/class/infiniband/<name>: libibverbs's ibdev_path, or the same directory under the
// device's current name when it was renamed (dev_path is <sysfs>/class/infiniband_verbs/uverbsN).
std::string ibdev_path_for(const ibv_device* dev, const std::string& name) {
  if (name == dev->name) return dev->ibdev_path;
  std::string path = dev->dev_path;
  const auto cut = path.rfind("/infiniband_verbs/");
  if (cut == std::string::npos) return dev->ibdev_path;
  return path.substr(0, cut) + "/infiniband/" + name;
}

// ibv_query_port_speed (rdma-core 62, IBVERBS_1.16), looked up once in the libibverbs this
// process loaded: the daemon is built against rdma-core 44's headers and runs on it, which has
// none, and calls it wherever a newer library is installed.
using QueryPortSpeedFn = int (*)(ibv_context*, uint32_t, uint64_t*);
QueryPortSpeedFn query_port_speed_fn() {
  static const auto fn =
      reinterpret_cast<QueryPortSpeedFn>(dlsym(RTLD_DEFAULT, "ibv_query_port_speed"));
  return fn;
}

std::string gid_text(const uint8_t raw[16]) {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(AF_INET6, raw, buf, sizeof buf)) return {};
  return buf;
}

}  // namespace

Catalog::~Catalog() {
  release();
}

void Catalog::release() {
  if (list_) ibv_free_device_list(list_);
  list_ = nullptr;
  entries_.clear();
  handles_.clear();
}

int Catalog::scan() {
  int num = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&num);
  // A failed list says nothing about the devices: the previous one stays, and with it what
  // the daemon can open.
  if (!list) return errno != 0 ? errno : ENOSYS;
  release();
  list_ = list;
  for (int i = 0; i < num && list_[i]; ++i) {
    ibv_device* dev = list_[i];
    DeviceEntry e;
    e.name = read_sysfs_line(std::string(dev->dev_path) + "/ibdev");
    if (e.name.empty()) e.name = ibv_get_device_name(dev);
    e.node_guid = be64toh(ibv_get_device_guid(dev));
    e.index = ibv_get_device_index(dev);
    e.ibdev_path = ibdev_path_for(dev, e.name);
    e.parent_driver = parent_driver(e.ibdev_path);
    entries_.push_back(std::move(e));
    handles_.push_back(list_[i]);
  }
  return 0;
}

std::unique_ptr<OpenDevice> Catalog::open(const DeviceEntry& entry, int* error) {
  ibv_device* dev = nullptr;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].index == entry.index && entries_[i].name == entry.name) dev = handles_[i];
  }
  if (!dev) {
    *error = ENODEV;
    return nullptr;
  }
  DevxStatus devx;
  ibv_context* ctx = open_context(dev, &devx, error);
  if (!ctx) return nullptr;
  ibv_device_attr attr{};
  if (int err = ibv_query_device(ctx, &attr); err != 0) {
    ibv_close_device(ctx);
    *error = err;
    return nullptr;
  }
  const int flags = fcntl(ctx->async_fd, F_GETFL);
  if (flags < 0 || fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    *error = errno;
    ibv_close_device(ctx);
    return nullptr;
  }
  const bool renamed = entry.name != dev->name;
  std::unique_ptr<Context> context(new Context(ctx, entry, attr.phys_port_cnt, renamed));
  if (devx.state == DevxState::kActive) context->devx_channel_ = DevxChannel::open(ctx, &devx);
  context->devx_ = std::move(devx);
  return context;
}

Context::Context(ibv_context* ctx, DeviceEntry entry, uint32_t num_ports, bool renamed)
    : OpenDevice(std::move(entry)), ctx_(ctx), num_ports_(num_ports), renamed_(renamed) {}

void Context::rename(const DeviceEntry& now) {
  entry_.name = now.name;
  entry_.ibdev_path = now.ibdev_path;
  renamed_ = true;
  netdev_cache_.clear();
}

Context::~Context() {
  devx_channel_.reset();
  ibv_close_device(ctx_);
}

Context::DevxRead Context::read_devx(std::span<uint8_t, 72> out, int* error) {
  if (!devx_channel_) return DevxRead::kEmpty;
  return devx_channel_->read(out, error);
}

int Context::async_fd() const {
  return ctx_->async_fd;
}

Context::ReadResult Context::read_event(RawEvent& out, int* error) {
  ibv_async_event ev{};
  for (;;) {
    errno = 0;
    if (ibv_get_async_event(ctx_, &ev) == 0) break;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadResult::kEmpty;
    *error = errno;
    return ReadResult::kError;
  }
  out.type = ev.event_type;
  // The union's meaning depends on the type; copy the member libibverbs filled.
  out.element = is_affiliated(ev.event_type)
                    ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ev.element.cq))
                    : static_cast<uint32_t>(ev.element.port_num);
  // Acked before anything else happens to it: for port and device events this is a no-op in
  // libibverbs, for affiliated ones it is what keeps destroy calls from waiting forever.
  ibv_ack_async_event(&ev);
  ++events_acked_;
  return ReadResult::kEvent;
}

DeviceQueries::PortAttr port_attr_of(uint32_t port, const ibv_port_attr& a) {
  RawPortAttr raw;
  raw.state = a.state;
  raw.phys_state = a.phys_state;
  raw.link_layer = a.link_layer;
  raw.active_mtu = a.active_mtu;
  raw.active_width = a.active_width;
  raw.active_speed = a.active_speed;
  raw.lid = a.lid;
  raw.sm_lid = a.sm_lid;
  raw.sm_sl = a.sm_sl;
  raw.lmc = a.lmc;
  DeviceQueries::PortAttr out;
  out.info = decode_port(port, raw);
  out.gid_tbl_len = static_cast<uint32_t>(a.gid_tbl_len);
  out.pkey_tbl_len = a.pkey_tbl_len;
  return out;
}

int Context::query_port(uint32_t port, PortAttr& out) {
  ibv_port_attr a{};
  if (int err = ibv_query_port(ctx_, static_cast<uint8_t>(port), &a); err != 0) return err;
  out = port_attr_of(port, a);
  // A speed the 8-bit active_speed cannot carry (XDR: 0 there) is in sysfs `rate`, which the
  // kernel prints from the same query (core/port_rate.h). Read only then: most ports need not.
  if (out.info.speed == LinkSpeed::kUnknown) {
    const std::string rate =
        read_sysfs_line(entry_.ibdev_path + "/ports/" + std::to_string(port) + "/rate");
    out.info.speed = choose_lane_speed(a.active_speed, parse_sysfs_rate(rate));
  }
  return 0;
}

EffectiveSpeed Context::query_effective_speed(uint32_t port) {
  const QueryPortSpeedFn fn = query_port_speed_fn();
  if (!fn) return effective_speed_of(port, {});
  return effective_speed_of(port, [&](uint32_t p, uint64_t* speed) { return fn(ctx_, p, speed); });
}

int Context::query_gids(std::span<const uint32_t> gid_tbl_lens,
                        std::vector<std::vector<GidEntry>>& per_port) {
  // One call for every port's table. Its size bound is the sum of the ports' table lengths; a
  // port whose length is unknown (its last query failed) is asked for it.
  const auto num_ports = static_cast<uint32_t>(gid_tbl_lens.size());
  size_t max_entries = 0;
  for (uint32_t p = 1; p <= num_ports; ++p) {
    uint32_t len = gid_tbl_lens[p - 1];
    if (len == 0) {
      ibv_port_attr a{};
      if (int err = ibv_query_port(ctx_, static_cast<uint8_t>(p), &a); err != 0) return err;
      len = static_cast<uint32_t>(a.gid_tbl_len);
    }
    max_entries += len;
  }
  std::vector<ibv_gid_entry> entries(max_entries);
  const ssize_t n =
      max_entries == 0 ? 0 : ibv_query_gid_table(ctx_, entries.data(), max_entries, 0);
  if (n < 0) return static_cast<int>(-n);
  per_port.assign(num_ports, {});
  for (ssize_t i = 0; i < n; ++i) {
    const ibv_gid_entry& e = entries[static_cast<size_t>(i)];
    if (e.port_num < 1 || e.port_num > num_ports) continue;
    GidEntry g;
    g.index = e.gid_index;
    g.gid = gid_text(e.gid.raw);
    g.type = gid_type_from_raw(e.gid_type);
    if (e.ndev_ifindex != 0) g.netdev = netdev_name(e.port_num, e.gid_index, e.ndev_ifindex);
    per_port[e.port_num - 1].push_back(std::move(g));
  }
  for (auto& table : per_port) {
    std::sort(table.begin(), table.end(),
              [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  }
  return 0;
}

int Context::query_pkeys(uint32_t port, uint32_t table_len, std::vector<uint16_t>& out) {
  out.assign(table_len, 0);
  if (renamed_) return read_sysfs_pkeys(port, out);
  for (uint32_t i = 0; i < table_len; ++i) {
    __be16 pkey = 0;
    errno = 0;
    if (ibv_query_pkey(ctx_, static_cast<uint8_t>(port), static_cast<int>(i), &pkey) != 0) {
      return errno != 0 ? errno : EIO;
    }
    out[i] = ntohs(pkey);
  }
  return 0;
}

int Context::read_sysfs_pkeys(uint32_t port, std::vector<uint16_t>& out) {
  // The same file ibv_query_pkey reads ("0xffff"), under the device's current name.
  const std::string dir = entry_.ibdev_path + "/ports/" + std::to_string(port) + "/pkeys/";
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string text = read_sysfs_line(dir + std::to_string(i));
    char* end = nullptr;
    const unsigned long v = std::strtoul(text.c_str(), &end, 16);
    if (text.empty() || *end != '\0' || v > 0xffff) return text.empty() ? ENOENT : EINVAL;
    out[i] = static_cast<uint16_t>(v);
  }
  return 0;
}

std::string Context::netdev_name(uint32_t port, uint32_t index, uint32_t ifindex) {
  const auto key = std::make_tuple(port, index, ifindex);
  if (auto it = netdev_cache_.find(key); it != netdev_cache_.end()) return it->second;
  std::string name = read_sysfs_line(entry_.ibdev_path + "/ports/" + std::to_string(port) +
                                     "/gid_attrs/ndevs/" + std::to_string(index));
  if (name.empty()) {
    char buf[IF_NAMESIZE] = {};
    if (if_indextoname(ifindex, buf)) name = buf;
  }
  netdev_cache_[key] = name;
  return name;
}

}  // namespace rdma_eventd::daemon::verbs
