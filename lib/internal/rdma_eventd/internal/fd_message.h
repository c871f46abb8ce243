// A message of one buffer that carries one file descriptor with SCM_RIGHTS: how the simulator
// hands a context its async fd, the stand-ins pass a DEVX channel, and the test harness gets a
// socket connected as another user. No C++ runtime needed: the stand-in libraries use it too.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>

namespace rdma_eventd::internal {

class FdMessage {
 public:
  FdMessage(void* data, size_t size) : iov_{data, size} {
    msg_.msg_iov = &iov_;
    msg_.msg_iovlen = 1;
  }
  FdMessage(const FdMessage&) = delete;
  FdMessage& operator=(const FdMessage&) = delete;

  // For sendmsg: the message carries `fd` (nothing when it is negative).
  void attach(int fd) {
    if (fd < 0) return;
    make_room();
    cmsghdr* c = CMSG_FIRSTHDR(&msg_);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  // For recvmsg: room for one descriptor.
  void make_room() {
    msg_.msg_control = control_;
    msg_.msg_controllen = sizeof control_;
  }
  // After recvmsg: the descriptor received, or -1.
  int received_fd() const {
    for (const cmsghdr* c = CMSG_FIRSTHDR(&msg_); c;
         c = CMSG_NXTHDR(const_cast<msghdr*>(&msg_), const_cast<cmsghdr*>(c))) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        return fd;
      }
    }
    return -1;
  }
  msghdr* get() { return &msg_; }

 private:
  iovec iov_;
  msghdr msg_{};
  alignas(cmsghdr) char control_[CMSG_SPACE(sizeof(int))] = {};
};

}  // namespace rdma_eventd::internal
