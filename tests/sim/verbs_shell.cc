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
//   ctx_device C                    name, GUID, index, paths of the context's device
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
//   fd_info C                       number, flags, close-on-exec and type of the async fd
//   drain C N                       N × (get_event + ack): count, per-type counts, order hash
//   consume C N                     N × (get_event + ack), nothing else: the consumer's rate
//   query_cost C P N                N × ibv_query_port: nanoseconds per query
//   consume_pipe N                  the same read loop on a plain pipe kept full: the baseline
//   strings                         the enum string functions over and around their ranges
//   sysfs_read L:DEV FILE           ibv_read_sysfs_file(ibdev_path, FILE)
//   sysfs_path                      ibv_get_sysfs_path
//   exit                            (or end of input) close every context, free every list
#include "verbs_shell.h"

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

namespace verbs_shell {
namespace {

struct DeviceList {
  ibv_device** devices = nullptr;
  int num = 0;
};

struct Exit {};

std::map<int, DeviceList> lists;
std::map<int, Ctx> contexts;
int next_list = 1, next_ctx = 1;

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

}  // namespace

// The return value, and errno when it reports a failure (ret != 0).
json with_errno(json j, long ret) {
  const int err = errno;
  j["ret"] = ret;
  j["errno"] = ret == 0 ? 0 : err;
  j["errno_name"] = ret == 0 ? "" : shell_support::errno_name(err);
  return j;
}

namespace {

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
  if (!l)
    return {{"null", true},
            {"num", num},
            {"errno", err},
            {"errno_name", shell_support::errno_name(err)}};
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
    return {{"null", true}, {"errno", err}, {"errno_name", shell_support::errno_name(err)}};
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
  if (auto answer = run_query(c, w)) return *answer;
  if (cmd == "ctx_device") return device_json(c.ctx->device);
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
    return {{"fd", c.ctx->async_fd},
            {"fifo", S_ISFIFO(st.st_mode)},
            {"accmode", fcntl(c.ctx->async_fd, F_GETFL) & O_ACCMODE},
            {"cloexec", (fcntl(c.ctx->async_fd, F_GETFD) & FD_CLOEXEC) != 0}};
  }
  if (cmd == "drain") return cmd_drain(c, num(2));
  if (cmd == "consume") return cmd_consume(c, num(2));
  if (cmd == "query_cost") return cmd_query_cost(c, static_cast<uint8_t>(num(2)), num(3));
  throw std::runtime_error("unknown command " + cmd);
}

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

}  // namespace
}  // namespace verbs_shell

using namespace verbs_shell;

int main() {
  shell_support::serve_lines<Exit>(
      [](const std::vector<std::string>& words) { return run(words); });
  release_everything();
  return 0;
}
