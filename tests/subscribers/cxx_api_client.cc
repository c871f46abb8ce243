// A small program on the installed C++ API (rdma_eventd/client.hpp, header-only over the C API):
// built with the project against the public headers and the shared library only. The subscriber
// tests run it against the daemon; it does what c_api_client.c does and prints the same lines.
//
//   cxx_api_client SOCKET N
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rdma_eventd/client.hpp"

namespace {

using namespace std::chrono_literals;

int fail(const char* what, rdmaev::Status s, std::string_view why) {
  std::printf("%s: %s: %.*s\n", what, std::string(rdmaev::status_name(s)).c_str(),
              static_cast<int>(why.size()), why.data());
  return 1;
}

std::string or_none(std::string_view s) {
  return s.empty() ? "none" : std::string(s);
}

void print_message(const rdmaev::MessageView& m) {
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  switch (m.kind()) {
    case rdmaev::Kind::kRecord:
      std::printf("record seq=%llu %s %s/%u state=%s severity=%s\n", u(m.seq()),
                  std::string(m.event()).c_str(), std::string(m.device()).c_str(), m.port(),
                  or_none(m.port_state().value_or("")).c_str(), std::string(m.severity()).c_str());
      break;
    case rdmaev::Kind::kSnapshot:
      std::printf("snapshot seq=%llu %s/%u state=%s\n", u(m.seq()), std::string(m.device()).c_str(),
                  m.port(), or_none(m.port_state().value_or("")).c_str());
      break;
    case rdmaev::Kind::kReply:
      std::printf("reply op=%s id=%llu seq=%llu\n", std::string(m.op()).c_str(), u(m.request_id()),
                  u(m.seq()));
      break;
    case rdmaev::Kind::kError:
      std::printf("error op=%s id=%llu %s: %s\n", or_none(m.op()).c_str(), u(m.request_id()),
                  std::string(m.error()).c_str(), std::string(m.error_text()).c_str());
      break;
    case rdmaev::Kind::kLost: {
      const rdmaev::MessageView::Lost l = m.lost().value_or(rdmaev::MessageView::Lost{});
      std::printf("lost %llu records, seq %llu-%llu\n", u(l.records), u(l.first_seq),
                  u(l.last_seq));
      break;
    }
    default:
      std::printf("other: %s\n", std::string(m.json()).c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cxx_api_client SOCKET N\n");
    return 2;
  }
  const int wanted = std::atoi(argv[2]);

  rdmaev::Client c;
  rdmaev::Status s = rdmaev::Client::connect("/nonexistent/events.sock", 1s, c);
  const std::string_view why = rdmaev::Client::connect_error();
  std::printf("bad path: %s, client %s, %s\n", std::string(rdmaev::status_name(s)).c_str(),
              c.connected() ? "set" : "NULL",
              why.find("No such file or directory") != std::string_view::npos
                  ? "says why"
                  : std::string(why).c_str());

  s = rdmaev::Client::connect(argv[1], 5s, c);
  if (s != rdmaev::Status::kOk) return fail("connect", s, rdmaev::Client::connect_error());
  std::printf("hello seq=%llu stream of %zu characters\n",
              static_cast<unsigned long long>(c.hello_seq()), c.stream().size());

  rdmaev::Filter f;
  std::printf("unknown event: %s\n",
              std::string(rdmaev::status_name(f.add_event("port_down"))).c_str());
  std::printf("bad port: %s\n", std::string(rdmaev::status_name(f.add_port("mlx5_0"))).c_str());
  uint64_t id = 0;
  s = f.add_port("mlx5_0/1");
  if (s == rdmaev::Status::kOk) s = c.subscribe(f, &id);
  if (s == rdmaev::Status::kOk) s = c.snapshot(&id);
  if (s != rdmaev::Status::kOk) return fail("requests", s, c.last_error());

  // Blocking style: the replies and the snapshot.
  rdmaev::MessageView m;
  do {
    s = c.next(m, 5s);
    if (s != rdmaev::Status::kOk) return fail("next_wait", s, c.last_error());
    print_message(m);
  } while (m.kind() != rdmaev::Kind::kSnapshot);
  std::printf("ready\n");
  std::fflush(stdout);

  // Event-loop style: poll the fd, then take every complete message.
  int got = 0;
  while (got < wanted) {
    pollfd p{c.fd(), POLLIN, 0};
    if (::poll(&p, 1, 20000) <= 0) return fail("poll", rdmaev::Status::kTimeout, "");
    while ((s = c.next(m)) == rdmaev::Status::kOk) {
      print_message(m);
      if (m.kind() == rdmaev::Kind::kRecord) ++got;
    }
    if (s != rdmaev::Status::kNoMessage) return fail("next", s, c.last_error());
  }

  s = c.ping(&id);
  if (s != rdmaev::Status::kOk) return fail("ping", s, c.last_error());
  s = c.next(m, 5s);
  if (s != rdmaev::Status::kOk) return fail("next_wait", s, c.last_error());
  print_message(m);
  std::printf("nothing more: %s\n", std::string(rdmaev::status_name(c.next(m, 50ms))).c_str());
  return 0;
}
