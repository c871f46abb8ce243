// The DEVX commands a context sends on its connection (common/protocol.h), answered as the
// kernel's devx.c answers the ioctls behind them: DEVX_ASYNC_EVENT_FD_ALLOC and
// DEVX_SUBSCRIBE_EVENT, with the same checks in the same order and the same errnos.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <sstream>

#include "common/devx.h"
#include "common/protocol.h"
#include "simulator.h"

namespace rdmasim {
namespace {

ContextReply error(int err) {
  return ContextReply{"ERR " + std::to_string(err), UniqueFd()};
}

bool is_eventfd(int fd) {
  char link[64];
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
  return n > 0 && std::string(link, static_cast<size_t>(n)) == "anon_inode:[eventfd]";
}

}  // namespace

ContextReply Simulator::on_context_request(const ContextView& c, const std::string& line,
                                           UniqueFd fd) {
  // A disassociated context fails every command (ib_uverbs: EIO).
  if (c.silenced) return error(EIO);
  const DeviceEntry* e = fabric_->find_index(c.device_index);
  if (!e) return error(EIO);
  // Not mlx5: libmlx5 has no DEVX operations for the context. mlx5 without UCTX: the driver does
  // not even register the DEVX objects (devx_is_supported), so the ioctl names no method.
  if (!e->model.devx.is_mlx5()) return error(EOPNOTSUPP);
  if (!e->model.devx.has_devx()) return error(EPROTONOSUPPORT);
  const std::string verb = line.substr(0, line.find(' '));
  if (verb == kChannelVerb) return create_channel(c, line);
  if (verb == kSubscribeVerb || verb == kSubscribeFdVerb) return subscribe(c, line, std::move(fd));
  return error(EINVAL);
}

ContextReply Simulator::create_channel(const ContextView& c, const std::string& line) {
  std::istringstream in(line.substr(line.find(' ') + 1));
  uint64_t flags = 0;
  if (!(in >> flags)) return error(EINVAL);
  // uverbs_get_flags32(): a flag it does not know is EINVAL.
  if (flags & ~uint64_t{devx::kChannelOmitData}) return error(EINVAL);
  uint64_t id = 0;
  uint32_t slot = 0;
  UniqueFd client;
  if (int err = channels_.create({c.id, c.pid, c.device_index, c.device_name},
                                 flags & devx::kChannelOmitData, &id, &slot, &client))
    return error(err);
  return ContextReply{"OK " + std::to_string(id) + " " + std::to_string(slot), std::move(client)};
}

ContextReply Simulator::subscribe(const ContextView& c, const std::string& line, UniqueFd fd) {
  std::istringstream in(line);
  std::string verb;
  uint64_t channel = 0;
  in >> verb >> channel;
  const bool with_fd = verb == kSubscribeFdVerb;
  uint64_t cookie = 0, events_size = 2;
  if (!with_fd) in >> cookie >> events_size;
  std::vector<uint16_t> events;
  for (uint64_t n; events.size() <= devx::kMaxEventsPerSubscribe && in >> n;)
    events.push_back(n > USHRT_MAX ? USHRT_MAX : static_cast<uint16_t>(n));
  if (in.fail() && !in.eof()) return error(EINVAL);

  // devx.c, MLX5_IB_METHOD_DEVX_SUBSCRIBE_EVENT, in its order: a DEVX context; the channel fd of
  // this context; the event list (a u16 array of at least one and at most MAX_NUM_EVENTS); each
  // event allowed without an object (is_valid_events); for an eventfd, an eventfd.
  if (c.devx_uid == 0) return error(EINVAL);
  if (!channels_.owns(c.id, channel)) return error(EBADF);
  if (events_size == 0 || events_size % 2 != 0) return error(EINVAL);
  if (events_size / 2 > devx::kMaxEventsPerSubscribe) return error(EINVAL);
  if (events.size() != events_size / 2) return error(EINVAL);
  const ShmDevx caps = devx_caps(fabric_->find_index(c.device_index)->model);
  for (uint16_t event : events)
    if (!devx::is_unaffiliated_event(caps, event)) return error(EINVAL);
  int err;
  if (with_fd) {
    if (!fd) return error(EBADF);  // eventfd_ctx_fdget() of no fd
    if (!is_eventfd(fd.get())) return error(EINVAL);
    err = channels_.subscribe_fd(channel, events[0], std::move(fd));
  } else {
    err = channels_.subscribe(channel, events, cookie);
  }
  return err ? error(err) : ContextReply{"OK", UniqueFd()};
}

}  // namespace rdmasim
