// A hung counter's file (`rdma-sim counter fail DEV/PORT NAME hang`) is a FIFO that nobody
// writes: a reader's plain open() of it blocks in the kernel until a writer comes, as a read
// waits on a firmware that stopped answering (docs/simulator.md, "Port counters"). FifoRelease
// lets those readers go when the FIFO leaves the tree, with the counter's value to read.
#pragma once

#include <string>
#include <vector>

#include "unique_fd.h"

namespace rdmasim {

// The FIFOs a change of the tree takes out of it (a counter's fault cleared or changed, its
// device removed, the tree removed). add() each one before the change; once the change is made,
// the destructor lets go every reader blocked on them, with the text to read.
//
// add() holds a FIFO by an O_PATH descriptor, which opens neither end: it never blocks and no
// reader takes it for a writer. The change then puts something else at the path (or removes
// it), so no new reader can get to the FIFO, and the destructor opens its write end through
// /proc/self/fd, without blocking: that succeeds only while a reader is there, waiting in open()
// or reading. It writes the text and closes: every waiting reader's open() returns and its
// read() gets the text, then end of file. Readers let go together share that one write: the
// first to read gets the text, the others end of file (0 bytes).
//
// A reader whose open() had found the FIFO by its path just before the change may reach it
// after that write. A few more rounds follow, each opening and closing the write end with
// nothing written, until no reader is left (ENXIO) or the rounds run out: such a late reader
// reads end of file rather than waiting forever.
//
// Without /proc the readers are let go through the path in add(), before the change, and a
// reader that opens the FIFO between the two waits until it is signalled.
class FifoRelease {
 public:
  FifoRelease() = default;
  ~FifoRelease();
  FifoRelease(const FifoRelease&) = delete;
  FifoRelease& operator=(const FifoRelease&) = delete;

  // The entry at `path`, if it is a FIFO: its readers are to read `text`. Anything else there
  // (a file, a directory, nothing) is left alone.
  void add(const std::string& path, std::string text);

 private:
  struct Held {
    UniqueFd fd;       // O_PATH
    std::string proc;  // /proc/self/fd/N
    std::string text;
  };
  std::vector<Held> held_;
};

}  // namespace rdmasim
