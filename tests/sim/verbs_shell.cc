// verbs_shell: a program written against the real <infiniband/verbs.h> and linked against the
// system libibverbs, driven line by line on stdin. Tests run it under the simulator (the stand-in
// comes first in LD_LIBRARY_PATH) and compare its answers with what rdma-core v44 gives.
//
// One command per line, one JSON object per answer line. Handles: device lists are L<n>, devices
// inside a list are named by position or by name ("L1:0", "L1:mlx5_0"), contexts are C<n>.
//   list                            ibv_get_device_list (the list is kept until `free`)
//   free L                          ibv_free_device_list
//   device_info L:DEV               name, GUID, index, paths of a device of a kept list
//   open L:DEV                      ibv_open_device
//   close C                         ibv_close_device
//   query_port C P                  ibv_query_port as verbs.h compiles it (vctx->query_port, 52 B)
//   query_port_compat C P           the exported ibv_query_port symbol (48 B)
//   query_device C | query_device_ex C [COMP_MASK]
//   query_gid C P I | query_gid_type C P I | query_pkey C P I | get_pkey_index C P PKEY
//   query_gid_ex C P I [FLAGS [ENTRY_SIZE]] | query_gid_table C MAX [FLAGS [ENTRY_SIZE]]
//   get_event C                     ibv_get_async_event (blocks unless nonblock was set)
//   ack C                           ibv_ack_async_event on C's last event
//   read_raw C N                    read(async_fd, N bytes)
//   poll C MS                       poll(async_fd, POLLIN)
//   nonblock C 0|1                  O_NONBLOCK on the async fd
//   fd_info C                       flags, close-on-exec and type of the async fd
//   drain C N                       N × (get_event + ack): count, per-type counts, order hash
//   consume C N                     N × (get_event + ack), nothing else: the consumer's rate
//   query_cost C P N                N × ibv_query_port: nanoseconds per query
//   consume_pipe N                  the same read loop on a plain pipe kept full: the baseline
//   strings                         the enum string functions over and around their ranges
//   sysfs_read L:DEV FILE           ibv_read_sysfs_file(ibdev_path, FILE)
//   sysfs_path                      ibv_get_sysfs_path
//   exit                            (or end of input) close every context, free every list
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using nlohmann::json;

// Exported symbols that only rdma-core's private driver.h declares (ibv_devinfo uses them), and
// those that verbs.h hides behind macros or inline wrappers.
extern "C" int ibv_query_gid_type(ibv_context* ctx, uint8_t port, unsigned int index, int* type);
extern "C" int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size);
extern "C" const char* ibv_get_sysfs_path(void);
#undef ibv_query_port
extern "C" int ibv_query_port(ibv_context* ctx, uint8_t port, struct _compat_ibv_port_attr* attr);

namespace {

struct DeviceList {
  ibv_device** devices = nullptr;
  int num = 0;
};

struct Ctx {
  ibv_context* ctx = nullptr;
  ibv_async_event last{};
  bool has_last = false;
};

struct Exit {};

std::map<int, DeviceList> lists;
std::map<int, Ctx> contexts;
int next_list = 1, next_ctx = 1;

std::string hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const auto b = static_cast<const uint8_t*>(p)[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

std::string ptr(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

int handle_num(const std::string& h, char prefix) {
  if (h.size() < 2 || h[0] != prefix) throw std::runtime_error("bad handle " + h);
  return std::stoi(h.substr(1));
}

ibv_device* device_ref(const std::string& ref) {
  const size_t colon = ref.find(':');
  if (colon == std::string::npos) throw std::runtime_error("expected L<n>:DEV, got " + ref);
  DeviceList& l = lists.at(handle_num(ref.substr(0, colon), 'L'));
  const std::string dev = ref.substr(colon + 1);
  if (!dev.empty() && dev.find_first_not_of("0123456789") == std::string::npos) {
    const int i = std::stoi(dev);
    if (i >= l.num) throw std::runtime_error("no device " + dev + " in the list");
    return l.devices[i];
  }
  for (int i = 0; i < l.num; ++i)
    if (dev == ibv_get_device_name(l.devices[i])) return l.devices[i];
  throw std::runtime_error("no device " + dev + " in the list");
}

Ctx& ctx_ref(const std::string& ref) {
  return contexts.at(handle_num(ref, 'C'));
}

json port_attr_json(const ibv_port_attr& a) {
  return {{"state", a.state},
          {"max_mtu", a.max_mtu},
          {"active_mtu", a.active_mtu},
          {"gid_tbl_len", a.gid_tbl_len},
          {"port_cap_flags", a.port_cap_flags},
          {"max_msg_sz", a.max_msg_sz},
          {"bad_pkey_cntr", a.bad_pkey_cntr},
          {"qkey_viol_cntr", a.qkey_viol_cntr},
          {"pkey_tbl_len", a.pkey_tbl_len},
          {"lid", a.lid},
          {"sm_lid", a.sm_lid},
          {"lmc", a.lmc},
          {"max_vl_num", a.max_vl_num},
          {"sm_sl", a.sm_sl},
          {"subnet_timeout", a.subnet_timeout},
          {"init_type_reply", a.init_type_reply},
          {"active_width", a.active_width},
          {"active_speed", a.active_speed},
          {"phys_state", a.phys_state},
          {"link_layer", a.link_layer},
          {"flags", a.flags},
          {"port_cap_flags2", a.port_cap_flags2}};
}

json gid_entry_json(const ibv_gid_entry& e) {
  char text[INET6_ADDRSTRLEN] = "";
  inet_ntop(AF_INET6, e.gid.raw, text, sizeof text);
  return {{"gid", hex(e.gid.raw, 16)}, {"gid_text", text},       {"gid_index", e.gid_index},
          {"port_num", e.port_num},    {"gid_type", e.gid_type}, {"ndev_ifindex", e.ndev_ifindex}};
}

std::string errno_name(int err) {
  const char* name = err ? strerrorname_np(err) : nullptr;
  return name ? name : "";
}

// The return value, and errno when it reports a failure (ret != 0).
json with_errno(json j, long ret) {
  const int err = errno;
  j["ret"] = ret;
  j["errno"] = ret == 0 ? 0 : err;
  j["errno_name"] = ret == 0 ? "" : errno_name(err);
  return j;
}

json device_json(ibv_device* d) {
  const __be64 guid = ibv_get_device_guid(d);
  return {{"ptr", ptr(d)},
          {"name", ibv_get_device_name(d)},
          {"dev_name", d->dev_name},
          {"dev_path", d->dev_path},
          {"ibdev_path", d->ibdev_path},
          {"guid", hex(&guid, 8)},
          {"index", ibv_get_device_index(d)},
          {"node_type", d->node_type},
          {"transport_type", d->transport_type}};
}

json cmd_list() {
  errno = 0;
  int num = -1;
  ibv_device** l = ibv_get_device_list(&num);
  const int err = errno;
  if (!l) return {{"null", true}, {"num", num}, {"errno", err}, {"errno_name", errno_name(err)}};
  const int id = next_list++;
  lists[id] = DeviceList{l, num};
  json devs = json::array();
  for (int i = 0; l[i]; ++i)
    devs.push_back(device_json(l[i]));
  return {{"null", false},
          {"list", "L" + std::to_string(id)},
          {"num", num},
          {"terminated", l[num] == nullptr},
          {"devices", devs}};
}

json cmd_open(const std::string& ref) {
  errno = 0;
  ibv_context* c = ibv_open_device(device_ref(ref));
  if (!c) {
    const int err = errno;
    return {{"null", true}, {"errno", err}, {"errno_name", errno_name(err)}};
  }
  const int id = next_ctx++;
  contexts[id].ctx = c;
  auto* vctx = reinterpret_cast<verbs_context*>(reinterpret_cast<char*>(c) -
                                                offsetof(verbs_context, context));
  const int fl = fcntl(c->async_fd, F_GETFL);
  const int fdfl = fcntl(c->async_fd, F_GETFD);
  return {{"null", false},
          {"ctx", "C" + std::to_string(id)},
          {"device_is_listed_ptr", ptr(c->device)},
          {"async_fd", c->async_fd},
          {"cmd_fd", c->cmd_fd},
          {"num_comp_vectors", c->num_comp_vectors},
          {"abi_extended", c->abi_compat == __VERBS_ABI_IS_EXTENDED},
          {"vctx_sz", vctx->sz},
          {"has_query_port", vctx->query_port != nullptr},
          {"has_query_device_ex", vctx->query_device_ex != nullptr},
          {"async_accmode", fl & O_ACCMODE},
          {"async_nonblock", (fl & O_NONBLOCK) != 0},
          {"async_cloexec", (fdfl & FD_CLOEXEC) != 0},
          {"cmd_cloexec", (fcntl(c->cmd_fd, F_GETFD) & FD_CLOEXEC) != 0},
          {"mutex_trylock",
           pthread_mutex_trylock(&c->mutex) == 0 && pthread_mutex_unlock(&c->mutex) == 0}};
}

json cmd_get_event(Ctx& c) {
  ibv_async_event ev;
  memset(&ev, 0, sizeof ev);
  errno = 0;
  const int ret = ibv_get_async_event(c.ctx, &ev);
  if (ret) return with_errno({}, ret);
  c.last = ev;
  c.has_last = true;
  return with_errno({{"type", ev.event_type},
                     {"port_num", ev.element.port_num},
                     {"element_ptr", ptr(ev.element.cq)}},
                    0);
}

json cmd_drain(Ctx& c, uint64_t n) {
  // Exactly-once check material: the count, the count per (type, port), and an order-sensitive
  // hash (FNV-1a over type and port of every event, in order).
  std::map<std::string, uint64_t> per;
  uint64_t hash = 1469598103934665603ULL;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    ibv_async_event ev;
    if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", i}}, -1);
    const uint32_t words[2] = {static_cast<uint32_t>(ev.event_type),
                               static_cast<uint32_t>(ev.element.port_num)};
    for (size_t b = 0; b < sizeof words; ++b)
      hash = (hash ^ reinterpret_cast<const uint8_t*>(words)[b]) * 1099511628211ULL;
    ++per[std::to_string(ev.event_type) + "/" + std::to_string(ev.element.port_num)];
    ibv_ack_async_event(&ev);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"read", n}, {"per", per}, {"hash", std::to_string(hash)}, {"seconds", s}};
}

// A bare consumer: ibv_get_async_event + ibv_ack_async_event, nothing else; timed from the
// first event to the last.
json cmd_consume(Ctx& c, uint64_t n) {
  ibv_async_event ev;
  if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", 0}}, -1);
  ibv_ack_async_event(&ev);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 1; i < n; ++i) {
    if (ibv_get_async_event(c.ctx, &ev)) return with_errno({{"read", i}}, -1);
    ibv_ack_async_event(&ev);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"read", n}, {"seconds", s}, {"events_per_second", s > 0 ? (n - 1) / s : 0}};
}

// The same 16-byte read loop on an ordinary pipe that a writer thread keeps full with 1 MiB
// writes: what this machine allows a bare consumer, with no simulator involved.
json cmd_consume_pipe(uint64_t n) {
  int fds[2];
  if (pipe(fds) != 0) return {{"ret", -1}};
  fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
  std::thread writer([fd = fds[1], n] {
    std::vector<uint8_t> chunk(1 << 20, 0);
    for (uint64_t left = n * 16; left > 0;) {
      const size_t len = std::min<uint64_t>(left, chunk.size());
      const ssize_t w = write(fd, chunk.data(), len);
      if (w <= 0) break;
      left -= static_cast<uint64_t>(w);
    }
  });
  uint8_t rec[16];
  if (read(fds[0], rec, 16) != 16) n = 0;
  const auto start = std::chrono::steady_clock::now();
  uint64_t got = n ? 1 : 0;
  for (; got < n; ++got)
    if (read(fds[0], rec, 16) != 16) break;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  writer.join();
  close(fds[0]);
  close(fds[1]);
  return {
      {"ret", 0}, {"read", got}, {"seconds", s}, {"events_per_second", s > 0 ? (got - 1) / s : 0}};
}

// The cost of a query: N ibv_query_port calls (the inline path), nanoseconds per call.
json cmd_query_cost(Ctx& c, uint8_t port, uint64_t n) {
  ibv_port_attr a;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i)
    if (___ibv_query_port(c.ctx, port, &a)) return with_errno({}, -1);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {{"ret", 0}, {"queries", n}, {"ns_per_query", s * 1e9 / static_cast<double>(n)}};
}

json cmd_strings() {
  json port = json::array(), event = json::array(), node = json::array(), wc = json::array();
  for (int i = -1; i <= 7; ++i)
    port.push_back(ibv_port_state_str(static_cast<ibv_port_state>(i)));
  for (int i = -1; i <= 21; ++i)
    event.push_back(ibv_event_type_str(static_cast<ibv_event_type>(i)));
  for (int i = -2; i <= 8; ++i)
    node.push_back(ibv_node_type_str(static_cast<ibv_node_type>(i)));
  for (int i = -1; i <= 25; ++i)
    wc.push_back(ibv_wc_status_str(static_cast<ibv_wc_status>(i)));
  return {{"port_state", port}, {"event_type", event}, {"node_type", node}, {"wc_status", wc}};
}

json run(const std::vector<std::string>& w) {
  const std::string& cmd = w.at(0);
  auto arg = [&](size_t i) -> const std::string& { return w.at(i); };
  auto num = [&](size_t i) { return std::stoull(arg(i), nullptr, 0); };
  if (cmd == "list") return cmd_list();
  if (cmd == "free") {
    const int id = handle_num(arg(1), 'L');
    ibv_free_device_list(lists.at(id).devices);
    lists.erase(id);
    return {{"ret", 0}};
  }
  if (cmd == "open") return cmd_open(arg(1));
  if (cmd == "device_info") return device_json(device_ref(arg(1)));
  if (cmd == "close") {
    const int id = handle_num(arg(1), 'C');
    const int ret = ibv_close_device(contexts.at(id).ctx);
    contexts.erase(id);
    return {{"ret", ret}};
  }
  if (cmd == "exit") throw Exit{};
  if (cmd == "strings") return cmd_strings();
  if (cmd == "consume_pipe") return cmd_consume_pipe(num(1));
  if (cmd == "sysfs_path") return {{"path", ibv_get_sysfs_path()}};
  if (cmd == "sysfs_read") {
    char buf[256];
    memset(buf, 0, sizeof buf);
    errno = 0;
    const int ret =
        ibv_read_sysfs_file(device_ref(arg(1))->ibdev_path, arg(2).c_str(), buf, sizeof buf);
    json j = with_errno({{"value", ret > 0 ? buf : ""}}, ret < 0 ? ret : 0);
    j["ret"] = ret;  // the length read
    return j;
  }

  Ctx& c = ctx_ref(arg(1));
  if (cmd == "query_port") {
    ibv_port_attr a;
    memset(&a, 0xaa, sizeof a);
    errno = 0;
    const int ret = ___ibv_query_port(c.ctx, static_cast<uint8_t>(num(2)), &a);
    return with_errno(ret ? json{} : json{{"attr", port_attr_json(a)}}, ret);
  }
  if (cmd == "query_port_compat") {
    ibv_port_attr a;
    memset(&a, 0xaa, sizeof a);
    errno = 0;
    const int ret = ibv_query_port(c.ctx, static_cast<uint8_t>(num(2)),
                                   reinterpret_cast<_compat_ibv_port_attr*>(&a));
    json j = ret ? json{} : json{{"attr", port_attr_json(a)}};
    j["bytes_after_48"] = hex(reinterpret_cast<char*>(&a) + 48, sizeof a - 48);
    return with_errno(j, ret);
  }
  if (cmd == "query_device") {
    ibv_device_attr a;
    memset(&a, 0, sizeof a);
    errno = 0;
    const int ret = ibv_query_device(c.ctx, &a);
    return with_errno({{"fw_ver", a.fw_ver},
                       {"node_guid", hex(&a.node_guid, 8)},
                       {"phys_port_cnt", a.phys_port_cnt},
                       {"vendor_id", a.vendor_id},
                       {"vendor_part_id", a.vendor_part_id},
                       {"max_qp", a.max_qp},
                       {"max_pkeys", a.max_pkeys}},
                      ret);
  }
  if (cmd == "query_device_ex") {
    ibv_device_attr_ex a;
    memset(&a, 0xaa, sizeof a);
    ibv_query_device_ex_input in{};
    in.comp_mask = w.size() > 2 ? static_cast<uint32_t>(num(2)) : 0;
    errno = 0;
    const int ret = ibv_query_device_ex(c.ctx, &in, &a);
    return with_errno({{"phys_port_cnt", a.orig_attr.phys_port_cnt},
                       {"fw_ver", ret ? "" : a.orig_attr.fw_ver},
                       {"completion_timestamp_mask", a.completion_timestamp_mask},
                       {"hca_core_clock", a.hca_core_clock}},
                      ret);
  }
  if (cmd == "query_gid") {
    ibv_gid g;
    memset(&g, 0xaa, sizeof g);
    errno = 0;
    const int ret = ibv_query_gid(c.ctx, static_cast<uint8_t>(num(2)),
                                  static_cast<int>(std::stoll(arg(3))), &g);
    return with_errno({{"gid", hex(g.raw, 16)}}, ret);
  }
  if (cmd == "query_gid_type") {
    int type = -7;
    errno = 0;
    const int ret = ibv_query_gid_type(c.ctx, static_cast<uint8_t>(num(2)),
                                       static_cast<unsigned>(num(3)), &type);
    return with_errno({{"type", type}}, ret);
  }
  if (cmd == "query_gid_ex") {
    const size_t entry_size = w.size() > 5 ? num(5) : sizeof(ibv_gid_entry);
    std::vector<uint8_t> buf(std::max<size_t>(entry_size, sizeof(ibv_gid_entry)) + 16, 0xaa);
    errno = 0;
    const int ret =
        _ibv_query_gid_ex(c.ctx, static_cast<uint32_t>(num(2)), static_cast<uint32_t>(num(3)),
                          reinterpret_cast<ibv_gid_entry*>(buf.data()),
                          w.size() > 4 ? static_cast<uint32_t>(num(4)) : 0, entry_size);
    json j;
    if (ret == 0) j["entry"] = gid_entry_json(*reinterpret_cast<ibv_gid_entry*>(buf.data()));
    j["bytes"] = hex(buf.data(), buf.size());
    j["errno_value"] = errno;
    j["ret"] = ret;  // a positive errno itself, not -1
    return j;
  }
  if (cmd == "query_gid_table") {
    const size_t max = num(2);
    const size_t entry_size = w.size() > 4 ? num(4) : sizeof(ibv_gid_entry);
    std::vector<uint8_t> buf(max * entry_size + 16, 0xaa);
    errno = 0;
    const ssize_t ret =
        _ibv_query_gid_table(c.ctx, reinterpret_cast<ibv_gid_entry*>(buf.data()), max,
                             w.size() > 3 ? static_cast<uint32_t>(num(3)) : 0, entry_size);
    json entries = json::array();
    for (ssize_t i = 0; i < ret; ++i) {
      ibv_gid_entry e{};
      memcpy(&e, buf.data() + i * entry_size, std::min(entry_size, sizeof e));
      entries.push_back(gid_entry_json(e));
    }
    return {{"ret", ret}, {"entries", entries}, {"bytes", hex(buf.data(), buf.size())}};
  }
  if (cmd == "query_pkey") {
    __be16 pkey = 0xaaaa;
    errno = 0;
    const int ret =
        ibv_query_pkey(c.ctx, static_cast<uint8_t>(num(2)), static_cast<int>(num(3)), &pkey);
    return with_errno({{"pkey", be16toh(pkey)}, {"raw", hex(&pkey, 2)}}, ret);
  }
  if (cmd == "get_pkey_index") {
    errno = 0;
    const int ret = ibv_get_pkey_index(c.ctx, static_cast<uint8_t>(num(2)),
                                       htobe16(static_cast<uint16_t>(num(3))));
    json j = with_errno({}, ret < 0 ? ret : 0);
    j["ret"] = ret;
    return j;
  }
  if (cmd == "get_event") return cmd_get_event(c);
  if (cmd == "ack") {
    if (!c.has_last) throw std::runtime_error("no event to ack");
    ibv_ack_async_event(&c.last);
    c.has_last = false;
    return {{"ret", 0}};
  }
  if (cmd == "read_raw") {
    std::vector<uint8_t> buf(num(2) + 16, 0);
    errno = 0;
    const ssize_t n = read(c.ctx->async_fd, buf.data(), num(2));
    return {{"ret", n},
            {"errno", n < 0 ? errno : 0},
            {"hex", hex(buf.data(), n > 0 ? static_cast<size_t>(n) : 0)}};
  }
  if (cmd == "poll") {
    pollfd p{c.ctx->async_fd, POLLIN, 0};
    const int ret = poll(&p, 1, static_cast<int>(num(2)));
    return {{"ret", ret},
            {"revents", p.revents},
            {"pollin", (p.revents & POLLIN) != 0},
            {"pollhup", (p.revents & POLLHUP) != 0},
            {"pollerr", (p.revents & POLLERR) != 0}};
  }
  if (cmd == "nonblock") {
    const int fl = fcntl(c.ctx->async_fd, F_GETFL);
    const int ret = fcntl(c.ctx->async_fd, F_SETFL, num(2) ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
    return {{"ret", ret}};
  }
  if (cmd == "fd_info") {
    struct stat st {};
    fstat(c.ctx->async_fd, &st);
    return {{"fifo", S_ISFIFO(st.st_mode)},
            {"accmode", fcntl(c.ctx->async_fd, F_GETFL) & O_ACCMODE},
            {"cloexec", (fcntl(c.ctx->async_fd, F_GETFD) & FD_CLOEXEC) != 0}};
  }
  if (cmd == "drain") return cmd_drain(c, num(2));
  if (cmd == "consume") return cmd_consume(c, num(2));
  if (cmd == "query_cost") return cmd_query_cost(c, static_cast<uint8_t>(num(2)), num(3));
  throw std::runtime_error("unknown command " + cmd);
}

}  // namespace

// Like a well-behaved program: everything opened is closed, everything listed is freed (so a
// sanitizer build also checks that the library releases what it allocated).
void release_everything() {
  for (auto& [id, c] : contexts)
    ibv_close_device(c.ctx);
  contexts.clear();
  for (auto& [id, l] : lists)
    ibv_free_device_list(l.devices);
  lists.clear();
}

int main() {
  std::ios::sync_with_stdio(false);
  for (std::string line; std::getline(std::cin, line);) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string w; in >> w;)
      words.push_back(w);
    if (words.empty()) continue;
    json answer;
    try {
      answer = run(words);
    } catch (const Exit&) {
      break;
    } catch (const std::exception& e) {
      answer = {{"error", e.what()}};
    }
    std::cout << answer.dump() << std::endl;
  }
  release_everything();
  return 0;
}
