// devx_shell: a program written against the real <infiniband/mlx5dv.h> and linked against the
// system's libmlx5 and libibverbs, driven line by line on stdin. Tests run it under the simulator
// (the stand-ins come first in LD_LIBRARY_PATH) and compare its answers with what rdma-core v44
// and the kernel's devx.c give.
//
// One command per line, one JSON object per answer. Devices are named, contexts are C<n>,
// channels H<n>.
//   list                          ibv_get_device_list: names and mlx5dv_is_supported (kept)
//   open DEV verbs|dv|devx|bad_flags|bad_comp_mask
//                                 ibv_open_device, or mlx5dv_open_device with no attributes, with
//                                 MLX5DV_CONTEXT_FLAGS_DEVX, with an unknown flag, a comp_mask
//   close C                       ibv_close_device
//   query_port C P                ibv_query_port: state
//   get_async C                   ibv_get_async_event (blocking) + ibv_ack_async_event
//   caps C TYPE [OUTLEN]          QUERY_HCA_CAP of capability page TYPE, decoded
//   general C OPCODE INLEN OUTLEN mlx5dv_devx_general_cmd with a bare command of that opcode
//   channel C [omit|FLAGS]        mlx5dv_devx_create_event_channel
//   destroy H                     mlx5dv_devx_destroy_event_channel
//   subscribe H COOKIE EVENTS [SIZE]
//                                 mlx5dv_devx_subscribe_devx_event, EVENTS comma-separated (or
//                                 "none"), SIZE in bytes (default: the list's)
//   subscribe_fd H EVENT [pipe|none]
//                                 mlx5dv_devx_subscribe_devx_event_fd with a new eventfd (or a
//                                 pipe, or fd -1)
//   eventfd H I                   reads the I-th eventfd of H (non-blocking): the counter
//   get H LEN                     mlx5dv_devx_get_event with a buffer of LEN bytes
//   drain H N TIMEOUT_MS          N × get_event, polling while empty (devx_shell_events.cc)
//   nonblock H 0|1 | poll H MS | read_raw H LEN | fd_info H
//   exit                          (or end of input) destroy every channel, close every context
#include "devx_shell.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <iostream>
#include <sstream>

using nlohmann::json;

namespace devx_shell {

json result(long ret, bool failed) {
  const int err = failed ? errno : 0;
  return {{"ret", ret}, {"errno", err}, {"errno_name", shell_support::errno_name(err)}};
}

namespace {

struct Exit {};

ibv_device** devices = nullptr;
std::map<int, ibv_context*> contexts;
std::map<int, Channel> channels;
int next_ctx = 1, next_channel = 1;

int handle(const std::string& h, char prefix) {
  if (h.size() < 2 || h[0] != prefix) throw std::runtime_error("bad handle " + h);
  return std::stoi(h.substr(1));
}

ibv_device* device(const std::string& name) {
  for (int i = 0; devices && devices[i]; ++i)
    if (name == ibv_get_device_name(devices[i])) return devices[i];
  throw std::runtime_error("no device " + name + " (list first)");
}

json cmd_list() {
  if (devices) ibv_free_device_list(devices);
  devices = ibv_get_device_list(nullptr);
  if (!devices) return result(-1, true);
  json list = json::array();
  for (int i = 0; devices[i]; ++i)
    list.push_back(
        {{"name", ibv_get_device_name(devices[i])}, {"mlx5", mlx5dv_is_supported(devices[i])}});
  return {{"devices", list}};
}

json cmd_open(const std::string& name, const std::string& mode) {
  ibv_device* d = device(name);
  mlx5dv_context_attr attr{};
  errno = 0;
  ibv_context* ctx = nullptr;
  if (mode == "verbs") {
    ctx = ibv_open_device(d);
  } else if (mode == "dv") {
    ctx = mlx5dv_open_device(d, nullptr);
  } else {
    if (mode == "devx") attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
    if (mode == "bad_flags") attr.flags = 1u << 7;
    if (mode == "bad_comp_mask") attr.comp_mask = 1;
    ctx = mlx5dv_open_device(d, &attr);
  }
  if (!ctx) {
    json j = result(0, true);
    j["null"] = true;
    return j;
  }
  contexts[next_ctx] = ctx;
  return {{"null", false}, {"ctx", "C" + std::to_string(next_ctx++)}};
}

json cmd_channel(ibv_context* ctx, const std::string& flags_word) {
  uint32_t flags = 0;
  if (flags_word == "omit")
    flags = MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA;
  else if (!flags_word.empty())
    flags = static_cast<uint32_t>(std::stoul(flags_word, nullptr, 0));
  errno = 0;
  mlx5dv_devx_event_channel* ch = mlx5dv_devx_create_event_channel(
      ctx, static_cast<mlx5dv_devx_create_event_channel_flags>(flags));
  if (!ch) {
    json j = result(0, true);
    j["null"] = true;
    return j;
  }
  channels[next_channel].ch = ch;
  return {{"null", false}, {"ch", "H" + std::to_string(next_channel++)}, {"fd", ch->fd}};
}

json cmd_subscribe(Channel& c, uint64_t cookie, const std::string& list, const std::string& size) {
  std::vector<uint16_t> events;
  if (list != "none") {
    std::istringstream in(list);
    for (std::string e; std::getline(in, e, ',');)
      events.push_back(static_cast<uint16_t>(std::stoul(e, nullptr, 0)));
  }
  const auto sz = size.empty() ? events.size() * 2 : std::stoul(size);
  events.resize(std::max<size_t>(events.size(), sz / 2 + 1));  // what the call may read
  errno = 0;
  const int ret = mlx5dv_devx_subscribe_devx_event(c.ch, nullptr, static_cast<uint16_t>(sz),
                                                   events.data(), cookie);
  json j = result(ret, ret != 0);
  j["ret_is_errno"] = ret == 0 || ret == errno;
  return j;
}

json cmd_subscribe_fd(Channel& c, uint16_t event, const std::string& kind) {
  int fd = -1, other = -1;
  if (kind.empty()) {
    fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  } else if (kind == "pipe") {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    fd = p[0];
    other = p[1];
  }
  errno = 0;
  const int ret = mlx5dv_devx_subscribe_devx_event_fd(c.ch, fd, nullptr, event);
  json j = result(ret, ret != 0);
  if (kind.empty()) {
    j["eventfd"] = c.eventfds.size();
    c.eventfds.push_back(fd);
  } else if (fd >= 0) {
    close(fd);
    close(other);
  }
  return j;
}

json run(const std::vector<std::string>& w) {
  const std::string& cmd = w[0];
  auto arg = [&](size_t i) -> const std::string& {
    if (i >= w.size()) throw std::runtime_error(cmd + ": missing argument");
    return w[i];
  };
  auto num = [&](size_t i) { return std::stoull(arg(i), nullptr, 0); };
  auto opt = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  if (cmd == "exit") throw Exit{};
  if (cmd == "list") return cmd_list();
  if (cmd == "open") return cmd_open(arg(1), arg(2));
  if (w.size() > 1 && w[1][0] == 'H') {
    Channel& c = channels.at(handle(w[1], 'H'));
    if (cmd == "destroy") {
      mlx5dv_devx_destroy_event_channel(c.ch);
      for (int fd : c.eventfds)
        close(fd);
      channels.erase(handle(w[1], 'H'));
      return {{"ok", true}};
    }
    if (cmd == "subscribe") return cmd_subscribe(c, num(2), arg(3), opt(4));
    if (cmd == "subscribe_fd") return cmd_subscribe_fd(c, static_cast<uint16_t>(num(2)), opt(3));
    if (cmd == "eventfd") {
      uint64_t value = 0;
      errno = 0;
      const ssize_t n = read(c.eventfds.at(num(2)), &value, sizeof value);
      json j = result(n, n < 0);
      j["value"] = value;
      return j;
    }
    if (cmd == "get") return cmd_get(c, num(2));
    if (cmd == "drain") return cmd_drain(c, num(2), static_cast<int>(num(3)));
    if (cmd == "poll") return cmd_poll(c, static_cast<int>(num(2)));
    if (cmd == "read_raw") return cmd_read_raw(c, num(2));
    if (cmd == "nonblock") {
      const int flags = fcntl(c.ch->fd, F_GETFL);
      fcntl(c.ch->fd, F_SETFL, num(2) ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
      return {{"ok", true}};
    }
    if (cmd == "fd_info") {
      int type = 0;
      socklen_t len = sizeof type;
      getsockopt(c.ch->fd, SOL_SOCKET, SO_TYPE, &type, &len);
      return {{"nonblock", (fcntl(c.ch->fd, F_GETFL) & O_NONBLOCK) != 0},
              {"cloexec", (fcntl(c.ch->fd, F_GETFD) & FD_CLOEXEC) != 0},
              {"seqpacket", type == SOCK_SEQPACKET}};
    }
  }
  ibv_context* ctx = contexts.at(handle(arg(1), 'C'));
  if (cmd == "close") {
    contexts.erase(handle(arg(1), 'C'));
    return {{"ret", ibv_close_device(ctx)}};
  }
  if (cmd == "query_port") {
    ibv_port_attr a{};
    const int ret = ibv_query_port(ctx, static_cast<uint8_t>(num(2)), &a);
    errno = ret;
    json j = result(ret, ret != 0);
    j["state"] = a.state;
    return j;
  }
  if (cmd == "get_async") {
    ibv_async_event ev{};
    if (ibv_get_async_event(ctx, &ev) != 0) return result(-1, true);
    ibv_ack_async_event(&ev);
    return {{"type", ev.event_type}, {"port", ev.element.port_num}};
  }
  if (cmd == "caps")
    return cmd_caps(ctx, static_cast<uint16_t>(num(2)), w.size() > 3 ? num(3) : 0x1010);
  if (cmd == "general") return cmd_general(ctx, static_cast<uint16_t>(num(2)), num(3), num(4));
  if (cmd == "channel") return cmd_channel(ctx, opt(2));
  throw std::runtime_error("unknown command " + cmd);
}

// Like a well-behaved program: channels destroyed, contexts closed, the list freed.
void release_everything() {
  for (auto& [id, c] : channels) {
    mlx5dv_devx_destroy_event_channel(c.ch);
    for (int fd : c.eventfds)
      close(fd);
  }
  channels.clear();
  for (auto& [id, ctx] : contexts)
    ibv_close_device(ctx);
  contexts.clear();
  if (devices) ibv_free_device_list(devices);
}

}  // namespace
}  // namespace devx_shell

int main() {
  shell_support::serve_lines<devx_shell::Exit>(
      [](const std::vector<std::string>& words) { return devx_shell::run(words); });
  devx_shell::release_everything();
  return 0;
}
