// The subscriber hub: the Unix socket where clients follow the record stream (protocol v1,
// docs/protocol.md), as one more sink of the daemon, and the report socket beside it, where
// applications' reporters send reports and get no records. How it shares, bounds and writes
// records and decides who may connect: docs/architecture.md § Subscriber hub, docs/security.md.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/token_bucket.h"
#include "hub/access_policy.h"
#include "hub/listener.h"
#include "hub/output_queue.h"
#include "hub/ring.h"
#include "hub/state_source.h"
#include "loop/event_loop.h"
#include "schema/protocol_json.h"
#include "schema/status_reply.h"

namespace rdma_eventd::daemon {

struct HubStats {
  uint64_t subscribers = 0;        // connected now
  uint64_t accepted = 0;           // connections that became subscribers
  uint64_t refused = 0;            // connections refused, for any of the reasons below
  uint64_t refused_full = 0;       // socket.max_subscribers reached
  uint64_t refused_user_full = 0;  // socket.max_subscribers_per_user reached by the peer's uid
  uint64_t refused_access = 0;     // not in socket.allow_users / allow_groups
  uint64_t rate_limited = 0;       // requests refused over socket.max_requests_per_second
  uint64_t records_sent = 0;
  uint64_t records_lost = 0;
  uint64_t lost_notices = 0;
  uint64_t bytes_queued = 0;  // unsent, over every subscriber
  uint64_t request_errors = 0;
};

// The report socket's connections (reporters are not subscribers: none of the above counts them).
struct ReporterStats {
  uint64_t reporters = 0;  // connected now
  uint64_t accepted = 0;
  uint64_t refused = 0;            // for any of the reasons below
  uint64_t refused_full = 0;       // reports.max_reporters reached
  uint64_t refused_user_full = 0;  // reports.max_reporters_per_user reached by the peer's uid
  uint64_t refused_access = 0;     // not in socket.allow_users / allow_groups
  uint64_t rate_limited = 0;       // requests refused over socket.max_requests_per_second
  uint64_t request_errors = 0;
};

class SubscriberHub final {
 public:
  struct Identity {
    std::string version;
    std::string stream;
    std::string host;
  };

  // Listening sockets the service manager passed (socket activation: their paths, mode and group
  // are the .socket unit's).
  struct PassedSockets {
    internal::UniqueFd events;
    internal::UniqueFd report;
  };

  // Opens the socket (config.path) and the report socket beside it (report_socket_path()), or
  // adopts those passed. Passed an events socket and no report socket, it serves none: the
  // reporters of such a daemon connect to the events socket. Throws std::runtime_error when it
  // cannot open or adopt one.
  SubscriberHub(EventLoop& loop, StateSource& state, Identity identity, const SocketConfig& config,
                const ReportsConfig& reports, PassedSockets passed = {});
  ~SubscriberHub();
  SubscriberHub(const SubscriberHub&) = delete;
  SubscriberHub& operator=(const SubscriberHub&) = delete;

  // Queues a record for every subscriber whose filter matches, and keeps it for replays. Its
  // buffer (publish_record) is shared with them, not copied.
  void publish(const RecordPtr& record);
  // A record the ring pushed out that nothing held any more (no queue, no replay), for the
  // next record to be built in (publish_record); null when there is none. Records are only
  // ever held on the loop's thread, so once its count is 1, it stays this hub's alone.
  std::shared_ptr<PublishedRecord> take_spare() {
    return std::const_pointer_cast<PublishedRecord>(std::exchange(spare_, nullptr));
  }
  // Writes what the records published since the last flush queued: once per batch.
  void flush();

  // A reload: the limits and the allow-lists apply at once (a smaller queue bound applies from
  // the next record; a connected subscriber that the new allow-lists leave out is told so and
  // closed). path, mode, group and ring_records need a restart; returns false when one of them
  // differs.
  bool apply(const SocketConfig& config);

  HubStats stats() const;
  ReporterStats reporter_stats() const;
  // stats().subscribers without summing every subscriber's counters: the status line asks at
  // every connect and disconnect, which must not cost O(subscribers) each.
  uint64_t subscriber_count() const { return open_count_; }
  // Called whenever the number of connected subscribers changes (the daemon's status line).
  void on_subscribers_changed(std::function<void()> fn) { subscribers_changed_ = std::move(fn); }

  // Application reports (hub_reports.cc, docs/protocol.md "report"). The publisher stamps an
  // app_report record, sends it to every sink and returns its seq; without one, reports are
  // refused. The configuration (reports.*, the reporters' limits included) applies at once, a
  // reload too.
  using ReportPublisher = std::function<uint64_t(Record)>;
  void on_report(ReportPublisher fn) { publish_report_ = std::move(fn); }
  void set_reports(const ReportsConfig& config);

 private:
  struct Subscriber;
  enum class Refusal : uint8_t { kAccess, kFull, kUserFull, kReportersFull, kReporterUserFull };
  struct Refused {
    Refusal reason;
    RequestError error;
  };
  // Which socket a connection came in on.
  enum class Role : uint8_t { kSubscriber, kReporter };

  // hub_connections.cc
  void open_report_listener(const SocketConfig& config, internal::UniqueFd passed);
  void on_accept(Role role);
  void accept_one(internal::UniqueFd conn, Role role);
  std::optional<Refused> admission(int fd, const Peer& peer, Role role) const;
  std::optional<Refused> reporter_admission(const Peer& peer) const;
  void refuse(int fd, const Peer& peer, Role role, const Refused& refused);
  void log_connected(const Subscriber& s);
  void revoke_disallowed();
  static void count_user(std::map<uid_t, uint32_t>& per_user, uid_t uid, int delta);
  uint64_t wanted_fds() const;

  void on_io(Subscriber& s, bool readable, bool writable);
  void read_requests(Subscriber& s);
  void handle_lines(Subscriber& s);
  void handle_line(Subscriber& s, std::string_view line);
  void write(Subscriber& s);
  void fill_replay(Subscriber& s);
  void update_watch(Subscriber& s);
  void close_later(Subscriber& s, const std::string& why);
  void release_slot(Subscriber& s);
  void reap(uint64_t id);

  // hub_requests.cc
  void handle_request(Subscriber& s, const Request& r);
  void reply_since(Subscriber& s, const Request& r);
  void reply_retire(Subscriber& s, const Request& r);
  void queue_snapshot(Subscriber& s, const Request& r,
                      const std::function<void(JsonWriter&)>& reply_fields);
  void queue_error(Subscriber& s, const RequestError& e);
  std::optional<RequestError> reporter_refusal(const Subscriber& s, const Request& r) const;
  std::string status_reply(const Subscriber& self, const Request& r) const;
  StatusReply::Ring ring_status() const;
  StatusReply::Subscribers subscribers_status(const Subscriber& self) const;
  StatusReply::Reporters reporters_status() const;

  // hub_reports.cc
  void handle_report(Subscriber& s, const Request& r);
  void publish_pending_report(uint64_t subscriber_id);
  std::optional<RequestError> report_admission(const Subscriber& s, const Request& r);
  bool take_report_token(uid_t uid);
  Reporter reporter_of(const Subscriber& s) const;

  EventLoop& loop_;
  StateSource& state_;  // the retire request changes it
  Identity identity_;
  SocketConfig config_;
  UnixListener listener_;
  IoWatch accept_watch_;
  // The report socket, when there is one (report_listener_ and report_watch_ are set together).
  std::unique_ptr<UnixListener> report_listener_;
  std::unique_ptr<IoWatch> report_watch_;
  Timer accept_retry_;
  bool accept_paused_logged_ = false;
  // Per Refusal: whether one was logged at warning since a connection was last accepted.
  std::array<bool, 5> refusal_logged_{};
  // Accepted non-root connections are logged at info up to this rate, the rest at debug.
  TokenBucket connect_log_budget_;
  uint64_t connects_not_logged_ = 0;    // since the last info line
  std::map<uid_t, uint32_t> per_user_;  // open subscribers per uid
  std::map<uid_t, uint32_t> reporters_per_user_;
  // The monotonic clock, read once at the start of each hub callback: the request rates.
  int64_t clock_us_ = 0;
  RecordRing ring_;
  RecordPtr spare_;  // take_spare()
  std::map<uint64_t, std::unique_ptr<Subscriber>> subscribers_;
  // The same subscribers in id order, for the walks that every record and every batch make
  // (publish, flush): a vector is read straight through, where a map walk follows a node per
  // subscriber. Added to and removed from with subscribers_, and nowhere else. Reporters are in
  // subscribers_ (every connection is: their requests go the same way) but never here: no
  // record is queued for them, and a record costs nothing per reporter.
  std::vector<Subscriber*> walk_;
  size_t open_count_ = 0;      // subscribers holding a slot (closed ones wait to be reaped)
  size_t open_reporters_ = 0;  // reporters holding a slot
  uint64_t next_id_ = 1;       // one sequence for both sockets: an id names one connection
  HubStats totals_;            // of subscribers already gone, plus accepted/refused/request_errors
  ReporterStats reporter_totals_;  // the same for reporters
  std::function<void()> subscribers_changed_;

  // Application reports: the publisher, the configuration, the counters, and one token bucket
  // per reporting uid (reports.max_per_second), kept while it is used (report_budgets_ is
  // bounded: hub_reports.cc).
  struct ReportBudget {
    TokenBucket bucket;
    int64_t last_us;
  };
  ReportPublisher publish_report_;
  ReportsConfig reports_config_;
  StatusReply::Reports report_stats_;
  std::map<uid_t, ReportBudget> report_budgets_;
};

}  // namespace rdma_eventd::daemon
