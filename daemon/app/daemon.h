// The daemon as a whole: the loop, the watched devices, the pipeline from their events to
// records, and the sinks. Signals: SIGHUP reloads, SIGUSR1 rescans, SIGTERM/SIGINT stop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/options.h"
#include "config/config.h"
#include "core/decode.h"
#include "core/device_view.h"
#include "core/enricher.h"
#include "core/sink.h"
#include "core/stamper.h"
#include "hub/state_source.h"
#include "loop/event_loop.h"
#include "verbs/verbs.h"

namespace rdma_eventd::daemon {

class JournalSink;
class ServiceManager;
class SubscriberHub;

struct Counters {
  uint64_t events_read = 0;
  uint64_t events_acked = 0;
  uint64_t records = 0;
  uint64_t batches = 0;
  uint64_t query_failures = 0;
};

// The hub reads the daemon's state through StateSource only (snapshots, status).
class Daemon : private StateSource {
 public:
  Daemon(Options options, Config config);
  ~Daemon() override;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Opens the devices and the sinks. Throws std::runtime_error on a startup failure.
  void start();
  // Runs the loop until SIGTERM/SIGINT. Returns the exit status.
  int run();

 private:
  // One open device: members are destroyed in reverse order, so the watch goes before the
  // context that owns the fd it watches.
  struct WatchedDevice {
    std::unique_ptr<verbs::Context> context;
    DeviceView view;
    std::unique_ptr<IoWatch> watch;
    bool read_error_logged = false;
    std::vector<bool> query_error_logged;  // per QueryFailure::What
  };

  void rescan();
  void open_device(const verbs::DeviceEntry& entry);
  void close_device_later(int index, std::string why);
  void on_readable(WatchedDevice& dev);
  void publish(std::vector<Record>& records);
  void log_query_failures(WatchedDevice& dev, const std::vector<QueryFailure>& failures);
  void reload();
  void apply_config(const Config& next);
  void setup_journal();
  void setup_hub();
  SocketConfig socket_config() const;  // the configuration's, with --socket/--no-socket

  // The service manager (daemon_service.cc): socket activation, readiness, the status line.
  void setup_service();
  std::string service_status() const;
  void update_service_status();  // after anything that may change service_status()

  // StateSource
  uint64_t last_seq() const override { return stamper_.last_seq(); }
  std::vector<const DeviceView*> device_views() const override;
  DaemonCounters counters() const override;

  Options options_;
  Config config_;
  EventLoop loop_;
  RecordStamper stamper_;
  verbs::DeviceCatalog catalog_;
  std::map<int, std::unique_ptr<WatchedDevice>> devices_;  // by device index
  std::vector<RawEvent> batch_;
  std::unique_ptr<JournalSink> journal_;
  std::unique_ptr<RecordSink> stdout_sink_;
  std::unique_ptr<SubscriberHub> hub_;
  Counters counters_;
  int last_scan_error_ = -1;  // what the last "no devices" message said, to say it once
  std::vector<std::unique_ptr<SignalWatch>> signals_;
  std::unique_ptr<ServiceManager> service_;  // its watchdog timer goes before the loop
  int passed_socket_ = -1;                   // the subscriber socket, when socket-activated
};

// Largest batch of events read from one device before they are enriched and published.
// Bounds memory and the loop's turn length under a storm; every batch costs at most one
// query per port (and one GID table / P_Key table read when those changed).
inline constexpr size_t kMaxBatch = 256;

}  // namespace rdma_eventd::daemon
