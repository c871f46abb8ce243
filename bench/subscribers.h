// Subscribers: connections to the daemon's socket (docs/protocol.md) that send nothing and so
// receive every record, read by one thread of their own with epoll, as a client would.
//
// The reader reads each ready connection with one large read (1 MiB), timestamps it, and walks
// its lines: a record (`{"schema":...`) is counted and its seq checked against the one
// expected next; a `lost` line accounts for the records it names; anything else is counted
// apart. A port health verdict (a record whose event is `port_health`) takes a seq of its own
// but answers no injected event: its seq is checked like any other, and it is counted apart,
// so that the records, the loss check and the storm's clock count the injected events only.
// The reader keeps only the first bytes of each line, so its cost per record is one memchr and a
// short copy, whatever the record's size.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "util.h"

namespace rdma_eventd::bench {

struct StreamTotals {
  uint64_t records = 0;          // records read, port_health verdicts aside
  uint64_t verdict_records = 0;  // port_health records read (the health model's verdicts)
  uint64_t lost_records = 0;     // records the daemon said it dropped ("lost" lines)
  uint64_t lost_lines = 0;
  uint64_t missing = 0;     // seqs neither read nor reported lost (should be 0)
  uint64_t unexpected = 0;  // records out of order or duplicated (should be 0)
  uint64_t other_lines = 0;
  uint64_t bytes = 0;
  uint64_t connections_closed = 0;  // by the daemon: should be 0
  // The reader thread's own CPU time and how long it ran: a reader busy nearly all the time
  // is what limits the measurement, not the daemon.
  double reader_cpu_s = 0;
  double reader_wall_s = 0;
};

class SubscriberSet {
 public:
  // Called on the reader thread for every record: the connection's index, the record's seq
  // and the time of the read that completed its line.
  using RecordHook = std::function<void(size_t conn, uint64_t seq, int64_t read_ns)>;

  // Connects `count` subscribers, one after the other, and reads each one's hello.
  SubscriberSet(const std::string& socket_path, size_t count);
  ~SubscriberSet();
  SubscriberSet(const SubscriberSet&) = delete;
  SubscriberSet& operator=(const SubscriberSet&) = delete;

  size_t size() const { return conns_.size(); }
  // The last seq published before the connection (from its hello): its next record is seq + 1.
  uint64_t hello_seq(size_t conn) const { return conns_[conn].base; }

  // Starts the reader: it runs until every connection has accounted for `expected` records
  // after its hello (read, or reported lost), or until the set is destroyed.
  void start(uint64_t expected, RecordHook hook = nullptr);
  // Waits until then, or until `deadline_ns` (CLOCK_MONOTONIC); true when every record came.
  bool wait(int64_t deadline_ns);
  // When the last record was read (valid after wait() returned true).
  int64_t done_ns() const { return done_ns_; }
  // Stops the reader (if still running) and sums what every connection read.
  StreamTotals stop_and_total();

 private:
  struct Conn {
    UniqueFd fd;
    uint64_t base = 0;       // hello seq
    uint64_t next_seq = 0;   // the seq expected next
    uint64_t accounted = 0;  // records read or reported lost
    bool done = false;
    std::string head;     // the first bytes of the line being read
    size_t line_len = 0;  // its length so far
    StreamTotals totals;
  };

  void run();
  void consume(Conn& c, size_t index, const char* data, size_t n, int64_t t);
  void line(Conn& c, size_t index, int64_t t);
  void account(Conn& c, uint64_t n, int64_t t);

  std::vector<Conn> conns_;
  UniqueFd epoll_;
  uint64_t expected_ = 0;
  RecordHook hook_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  size_t conns_done_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool finished_ = false;  // under mu_
  int64_t done_ns_ = 0;
  double reader_cpu_s_ = 0;
  double reader_wall_s_ = 0;
};

// The daemon's status reply (docs/protocol.md, "status") over a connection of its own.
nlohmann::json daemon_status(const std::string& socket_path);

}  // namespace rdma_eventd::bench
