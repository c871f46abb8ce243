// netlink-capture: the kernel's netlink messages of devlink (the generic-netlink family) or of
// the RDMA stack (NETLINK_RDMA), as it sends them, one line of lowercase hex per netlink message,
// for the kernel tests (tests/kernel: the devlink and monitor scenarios) and the captured data
// of the unit tests (tests/unit/data/devlink/, tests/unit/data/rdma_netlink/).
//
//   netlink-capture [--rdma] [--query] [--exit-after-answer] [--output FILE] [--ready FILE]
//                   [--marks FILE] [--timeout S]
//
// devlink (the default): it resolves the family "devlink" and its multicast group "config"
// (CTRL_CMD_GETFAMILY: the ids are assigned at run time), joins the group and, with --query,
// asks for every health reporter (DEVLINK_CMD_HEALTH_REPORTER_GET, NLM_F_DUMP).
// --rdma: it opens NETLINK_RDMA, joins its notify group (RDMA_NL_GROUP_NOTIFY: the monitor's
// messages, Linux 6.12 and later) and, with --query, asks for the system attributes
// (RDMA_NLDEV_CMD_SYS_GET: the monitor mode is among them from 6.12 on).
// Every message it receives is written as it arrives, each line with one write(2): the
// GETFAMILY reply, the query's replies and its end (NLMSG_DONE, NLMSG_ERROR, or a reply that is
// not part of a multipart one), and each notification of the group. --ready FILE is created once
// the group is joined and the query sent: what happens after it is seen. --marks FILE: on
// SIGUSR1 it reads every message queued on its socket, then appends to FILE the number of lines
// written so far. The kernel queues a notification before the command that caused it returns,
// so a mark taken after a command ends that command's lines exactly. It runs until
// --timeout S seconds have passed, SIGTERM or SIGINT (exit 0), or, with --exit-after-answer, the
// query's end. A lost message (ENOBUFS) or any other error: a line on stderr and exit 1.
//
// Standalone on purpose (libc and the kernel's uapi headers only): it has to say what the kernel
// sent, not what the daemon's own netlink code understood of it.
#include <fcntl.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr uint32_t kGetFamilySeq = 1;
constexpr uint32_t kQuerySeq = 2;
// NETLINK_RDMA's notify group (RDMA_NL_GROUP_NOTIFY in enum rdma_nl_groups): the monitor's
// messages. Debian 12's uapi header predates it.
constexpr uint32_t kRdmaNotifyGroup = 4;

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_mark = 0;
void on_stop(int) {
  g_stop = 1;
}
void on_mark(int) {
  g_mark = 1;
}

struct Options {
  bool rdma = false;
  bool query = false;
  bool exit_after_answer = false;
  std::string output;
  std::string ready;
  std::string marks;
  double timeout_s = -1;  // < 0: none
};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "netlink-capture: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}
[[noreturn]] void die_msg(const std::string& what) {
  std::fprintf(stderr, "netlink-capture: %s\n", what.c_str());
  std::exit(1);
}

void usage_exit() {
  std::fprintf(stderr,
               "usage: netlink-capture [--rdma] [--query] [--exit-after-answer] [--output FILE]"
               " [--ready FILE] [--marks FILE] [--timeout S]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_exit();
      return argv[++i];
    };
    if (a == "--rdma") {
      o.rdma = true;
    } else if (a == "--query") {
      o.query = true;
    } else if (a == "--exit-after-answer") {
      o.exit_after_answer = true;
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--ready") {
      o.ready = value();
    } else if (a == "--marks") {
      o.marks = value();
    } else if (a == "--timeout") {
      char* end = nullptr;
      o.timeout_s = std::strtod(value(), &end);
      if (end == nullptr || *end != '\0' || o.timeout_s < 0) usage_exit();
    } else {
      usage_exit();
    }
  }
  if (o.exit_after_answer && !o.query) usage_exit();
  return o;
}

// One netlink message as one line: lowercase hex, the whole message (header included).
void write_hex_line(int fd, const nlmsghdr* h) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(h);
  std::string line;
  line.reserve(h->nlmsg_len * 2 + 1);
  for (uint32_t i = 0; i < h->nlmsg_len; ++i) {
    line.push_back(kDigits[p[i] >> 4]);
    line.push_back(kDigits[p[i] & 0xf]);
  }
  line.push_back('\n');
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::write(fd, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("write");
    off += static_cast<size_t>(n);
  }
}

// A request: the netlink header, then (generic netlink) its header, then attributes appended
// by put_attr. NETLINK_RDMA's requests have no header of their own after the netlink one.
struct Request {
  std::vector<unsigned char> buf;
  Request(uint16_t type, uint16_t flags, uint32_t seq) {
    buf.resize(NLMSG_HDRLEN);
    auto* h = reinterpret_cast<nlmsghdr*>(buf.data());
    h->nlmsg_type = type;
    h->nlmsg_flags = flags;
    h->nlmsg_seq = seq;
    h->nlmsg_pid = 0;
    finish();
  }
  Request(uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd, uint8_t version)
      : Request(type, flags, seq) {
    buf.resize(NLMSG_HDRLEN + GENL_HDRLEN);
    auto* g = reinterpret_cast<genlmsghdr*>(buf.data() + NLMSG_HDRLEN);
    g->cmd = cmd;
    g->version = version;
    g->reserved = 0;
    finish();
  }
  void put_attr(uint16_t type, const void* data, uint16_t len) {
    size_t at = buf.size();
    buf.resize(at + NLA_ALIGN(NLA_HDRLEN + len), 0);
    auto* a = reinterpret_cast<nlattr*>(buf.data() + at);
    a->nla_type = type;
    a->nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
    std::memcpy(buf.data() + at + NLA_HDRLEN, data, len);
    finish();
  }
  void finish() {
    reinterpret_cast<nlmsghdr*>(buf.data())->nlmsg_len = static_cast<uint32_t>(buf.size());
  }
};

void send_request(int fd, const Request& r) {
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, r.buf.data(), r.buf.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) < 0)
    die("sendto");
}

// The attributes of a range, visited in order: fn(type, payload, payload length).
template <typename Fn>
void for_each_attr(const unsigned char* p, size_t len, Fn fn) {
  while (len >= NLA_HDRLEN) {
    const auto* a = reinterpret_cast<const nlattr*>(p);
    if (a->nla_len < NLA_HDRLEN || a->nla_len > len) return;
    fn(static_cast<uint16_t>(a->nla_type & NLA_TYPE_MASK), p + NLA_HDRLEN,
       size_t{a->nla_len} - NLA_HDRLEN);
    size_t step = NLA_ALIGN(a->nla_len);
    if (step >= len) return;
    p += step;
    len -= step;
  }
}

struct Family {
  uint16_t id = 0;
  uint32_t config_group = 0;
};

// The GETFAMILY reply: the family id and the "config" group's id.
Family parse_family(const nlmsghdr* h) {
  Family f;
  const auto* body = reinterpret_cast<const unsigned char*>(h) + NLMSG_HDRLEN + GENL_HDRLEN;
  size_t len = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  for_each_attr(body, len, [&](uint16_t type, const unsigned char* v, size_t vlen) {
    if (type == CTRL_ATTR_FAMILY_ID && vlen >= 2) std::memcpy(&f.id, v, 2);
    if (type != CTRL_ATTR_MCAST_GROUPS) return;
    for_each_attr(v, vlen, [&](uint16_t, const unsigned char* grp, size_t glen) {
      std::string name;
      uint32_t id = 0;
      for_each_attr(grp, glen, [&](uint16_t t, const unsigned char* gv, size_t gvlen) {
        if (t == CTRL_ATTR_MCAST_GRP_NAME)
          name.assign(reinterpret_cast<const char*>(gv),
                      strnlen(reinterpret_cast<const char*>(gv), gvlen));
        if (t == CTRL_ATTR_MCAST_GRP_ID && gvlen >= 4) std::memcpy(&id, gv, 4);
      });
      if (name == DEVLINK_GENL_MCGRP_CONFIG_NAME) f.config_group = id;
    });
  });
  return f;
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The socket's reader: every message it receives is written as a line, then handed to the
// handler of the moment.
class Capture {
 public:
  using Handler = std::function<void(const nlmsghdr*)>;

  Capture(int sock, int out, int marks) : sock_(sock), out_(out), marks_(marks), buf_(1 << 20) {}

  // Waits for one datagram (until the deadline or a stop signal; sigmask: the signal mask to wait
  // with) and handles its messages; false when it timed out or was stopped. A mark asked for
  // meanwhile is taken first.
  bool receive(double deadline, const sigset_t* sigmask, const Handler& handle) {
    while (!g_stop) {
      if (g_mark) {
        g_mark = 0;
        mark(handle);
      }
      pollfd p{sock_, POLLIN, 0};
      timespec ts{};
      timespec* tsp = nullptr;
      if (deadline >= 0) {
        double left = deadline - now_s();
        if (left <= 0) return false;
        ts.tv_sec = static_cast<time_t>(left);
        ts.tv_nsec = static_cast<long>((left - static_cast<double>(ts.tv_sec)) * 1e9);
        tsp = &ts;
      }
      int r = ::ppoll(&p, 1, tsp, sigmask);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) die("ppoll");
      if (r == 0) continue;  // the deadline is checked above
      if (read_one(0, handle)) return true;
    }
    return false;
  }

 private:
  // Reads one datagram (flags: MSG_DONTWAIT or 0) and handles its messages; false when there
  // was none.
  bool read_one(int flags, const Handler& handle) {
    ssize_t n = ::recv(sock_, buf_.data(), buf_.size(), MSG_TRUNC | flags);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return false;
    if (n < 0 && errno == ENOBUFS)
      die_msg("the kernel dropped messages (ENOBUFS): the capture is incomplete");
    if (n < 0) die("recv");
    if (static_cast<size_t>(n) > buf_.size()) die_msg("a datagram larger than the receive buffer");
    size_t len = static_cast<size_t>(n);
    for (auto* h = reinterpret_cast<const nlmsghdr*>(buf_.data()); NLMSG_OK(h, len);
         h = NLMSG_NEXT(h, len)) {
      write_hex_line(out_, h);
      ++lines_;
      handle(h);
    }
    if (len != 0) die_msg("a datagram ends with a partial netlink message");
    return true;
  }

  // Everything queued, then the number of lines so far on a line of the marks file.
  void mark(const Handler& handle) {
    while (read_one(MSG_DONTWAIT, handle)) {
    }
    if (marks_ < 0) return;
    std::string line = std::to_string(lines_) + "\n";
    if (::write(marks_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      die("write (marks)");
  }

  int sock_;
  int out_;
  int marks_;
  uint64_t lines_ = 0;
  std::vector<unsigned char> buf_;
};

void check_error_message(const nlmsghdr* h, const char* request) {
  if (h->nlmsg_type != NLMSG_ERROR) return;
  const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
  if (e->error == 0) return;
  errno = -e->error;
  die(request);
}

// Resolves the devlink family and joins its "config" group (the GETFAMILY reply is captured
// too); returns the family's id.
uint16_t join_devlink(int sock, Capture& capture, double deadline, const sigset_t* wait_mask) {
  Request getfamily(GENL_ID_CTRL, NLM_F_REQUEST, kGetFamilySeq, CTRL_CMD_GETFAMILY, 1);
  getfamily.put_attr(CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME, sizeof DEVLINK_GENL_NAME);
  send_request(sock, getfamily);
  Family family;
  auto on_family = [&](const nlmsghdr* h) {
    check_error_message(h, "CTRL_CMD_GETFAMILY \"devlink\" (no devlink in this kernel?)");
    if (h->nlmsg_type == GENL_ID_CTRL && h->nlmsg_seq == kGetFamilySeq) family = parse_family(h);
  };
  while (family.id == 0) {
    if (!capture.receive(deadline, wait_mask, on_family))
      die_msg("no reply to CTRL_CMD_GETFAMILY \"devlink\"");
  }
  if (family.config_group == 0) die_msg("the devlink family has no \"config\" group");
  if (::setsockopt(sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &family.config_group,
                   sizeof family.config_group) < 0)
    die("joining devlink's \"config\" group");
  return family.id;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);

  // SIGTERM and SIGINT are blocked but while waiting (ppoll's mask): a stop is seen between two
  // messages, never in the middle of writing one.
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  struct sigaction sm {};
  sm.sa_handler = on_mark;
  sigemptyset(&sm.sa_mask);
  sigaction(SIGUSR1, &sm, nullptr);
  sigset_t blocked, wait_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGUSR1);
  sigprocmask(SIG_BLOCK, &blocked, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGUSR1);

  int out = STDOUT_FILENO;
  if (!opt.output.empty()) {
    out = ::open(opt.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) die(opt.output.c_str());
  }
  int marks = -1;
  if (!opt.marks.empty()) {
    marks = ::open(opt.marks.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (marks < 0) die(opt.marks.c_str());
  }
  double deadline = opt.timeout_s < 0 ? -1 : now_s() + opt.timeout_s;

  int sock =
      ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, opt.rdma ? NETLINK_RDMA : NETLINK_GENERIC);
  if (sock < 0) die(opt.rdma ? "socket(NETLINK_RDMA)" : "socket(NETLINK_GENERIC)");
  // Room for a burst of notifications: a loss is reported (ENOBUFS), but better not had.
  int rcvbuf = 4 << 20;
  ::setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  ::setsockopt(sock, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (::bind(sock, reinterpret_cast<sockaddr*>(&local), sizeof local) < 0) die("bind");
  Capture capture(sock, out, marks);

  if (opt.rdma) {
    // Joined before the query, so that nothing announced after its answer is missed. A kernel
    // without the monitor (before 6.12) lets it be joined, and never sends to it.
    if (::setsockopt(sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &kRdmaNotifyGroup,
                     sizeof kRdmaNotifyGroup) < 0)
      die("joining NETLINK_RDMA's notify group");
    if (opt.query)
      send_request(sock, Request(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET),
                                 NLM_F_REQUEST, kQuerySeq));
  } else {
    const uint16_t family_id = join_devlink(sock, capture, deadline, &wait_mask);
    if (opt.query) {
      Request dump(family_id, NLM_F_REQUEST | NLM_F_DUMP, kQuerySeq,
                   DEVLINK_CMD_HEALTH_REPORTER_GET, DEVLINK_GENL_VERSION);
      send_request(sock, dump);
    }
  }
  if (!opt.ready.empty()) {
    int fd = ::open(opt.ready.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die(opt.ready.c_str());
    ::close(fd);
  }

  // The query's end: NLMSG_DONE or NLMSG_ERROR, or its one reply when it is not multipart
  // (RDMA_NLDEV_CMD_SYS_GET's answer).
  bool answered = false;
  auto on_message = [&](const nlmsghdr* h) {
    if (h->nlmsg_seq == kQuerySeq && (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR ||
                                      (h->nlmsg_flags & NLM_F_MULTI) == 0))
      answered = true;
  };
  // Until the deadline or a stop signal, or the query's end when asked.
  while (capture.receive(deadline, &wait_mask, on_message)) {
    if (answered && opt.exit_after_answer) break;
  }
  return 0;
}
