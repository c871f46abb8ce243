// DeviceSet on a real loop with a fake device catalog and a driven clock: what it does with the
// lifecycle's decisions (listing at the right time, closing by deferred work, the retry timer,
// stamping, counting).
#include "app/device_set.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <map>

#include "port_fixtures.h"

namespace rdma_eventd::daemon {
namespace {

// What the test knows about the devices a FakeCatalog opened, after they are gone too.
struct DeviceLog {
  int opened = 0;
  int closed = 0;
  uint64_t acked = 0;
};

// One port, LID 7. Its async fd is a pipe holding one byte per queued event.
class FakeDevice final : public OpenDevice {
 public:
  FakeDevice(DeviceEntry entry, DeviceLog& log) : OpenDevice(std::move(entry)), log_(log) {
    if (::pipe2(fds_, O_NONBLOCK | O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
    ++log_.opened;
  }
  ~FakeDevice() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
    ++log_.closed;
  }

  void queue(RawEvent ev) {
    events_.push_back(ev);
    if (::write(fds_[1], "e", 1) != 1) throw std::runtime_error("write");
  }

  void rename(const DeviceEntry& now) override { entry_ = now; }
  uint32_t num_ports() const override { return 1; }
  int async_fd() const override { return fds_[0]; }
  ReadResult read_event(RawEvent& out, int*) override {
    char c;
    if (::read(fds_[0], &c, 1) != 1) return ReadResult::kEmpty;
    out = events_.front();
    events_.pop_front();
    ++acked_;
    ++log_.acked;
    return ReadResult::kEvent;
  }
  uint64_t events_acked() const override { return acked_; }

  int query_port(uint32_t port, PortAttr& out) override {
    out.info = active_ib(port, 7);
    out.gid_tbl_len = 1;
    out.pkey_tbl_len = 1;
    return 0;
  }
  int query_gids(std::span<const uint32_t> lens,
                 std::vector<std::vector<GidEntry>>& per_port) override {
    per_port.assign(lens.size(), {});
    return 0;
  }
  int query_pkeys(uint32_t, uint32_t len, std::vector<uint16_t>& out) override {
    out.assign(len, 0xffff);
    return 0;
  }

 private:
  DeviceLog& log_;
  int fds_[2] = {-1, -1};
  std::deque<RawEvent> events_;
  uint64_t acked_ = 0;
};

class FakeCatalog final : public DeviceCatalog {
 public:
  explicit FakeCatalog(DeviceLog& log) : log_(log) {}

  int scan() override {
    ++scans;
    if (scan_error != 0) return scan_error;
    entries_ = listed;
    return 0;
  }
  const std::vector<DeviceEntry>& devices() const override { return entries_; }
  std::unique_ptr<OpenDevice> open(const DeviceEntry& entry, int* error) override {
    if (open_error != 0) {
      *error = open_error;
      return nullptr;
    }
    auto dev = std::make_unique<FakeDevice>(entry, log_);
    last_opened = dev.get();
    return dev;
  }

  std::vector<DeviceEntry> listed;  // what the next successful scan shows
  int scan_error = 0;
  int open_error = 0;
  int scans = 0;
  FakeDevice* last_opened = nullptr;  // valid while DeviceLog::closed says it is open

 private:
  DeviceLog& log_;
  std::vector<DeviceEntry> entries_;
};

class FakeClock final : public Clock {
 public:
  Instant now() const override { return at; }
  Instant at{1795342530000000, 86400000000};
};

class DeviceSetTest : public ::testing::Test {
 protected:
  DeviceSetTest() {
    auto catalog = std::make_unique<FakeCatalog>(log_);
    catalog_ = catalog.get();
    catalog_->listed = {
        DeviceEntry{"mlx5_0", 0x0c42a10300f65e44, 3, "/sys/class/infiniband/mlx5_0"}};
    set_ = std::make_unique<DeviceSet>(
        loop_, stamper_, std::move(catalog), clock_, [this](const std::vector<Record>& records) {
          published_.insert(published_.end(), records.begin(), records.end());
          closed_when_published_.push_back(log_.closed);
          if (stop_after_records_ && published_.size() >= stop_after_records_) {
            loop_.stop();
          }
        });
    set_->on_change([this] {
      if (stop_on_close_ && log_.closed > 0) loop_.stop();
    });
    set_->resync(DeviceSet::Mode::kStartup, "start");
  }

  // Runs the loop until it is stopped, at most 5 s.
  void run() {
    Timer deadline(loop_, [this] {
      timed_out_ = true;
      loop_.stop();
    });
    deadline.arm(std::chrono::seconds(5));
    loop_.run();
    ASSERT_FALSE(timed_out_) << "the loop did not stop within 5 s";
  }

  EventLoop loop_;
  RecordStamper stamper_{"stream-1", "node17", default_severities()};
  FakeClock clock_;
  DeviceLog log_;
  FakeCatalog* catalog_ = nullptr;
  std::unique_ptr<DeviceSet> set_;
  std::vector<Record> published_;
  std::vector<int> closed_when_published_;
  size_t stop_after_records_ = 0;
  bool stop_on_close_ = false;
  bool timed_out_ = false;
};

TEST_F(DeviceSetTest, ABatchIsStampedWithOneClockReadingAndItsAcksAreCountedByTheDevice) {
  ASSERT_EQ(log_.opened, 1);
  catalog_->last_opened->queue({event_type::kLidChange, 1});
  catalog_->last_opened->queue({event_type::kPortErr, 1});
  stop_after_records_ = 2;
  run();

  ASSERT_EQ(published_.size(), 2u);
  EXPECT_EQ(published_[0].event, EventKind::kLidChange);
  EXPECT_EQ(published_[0].seq, 1u);
  EXPECT_EQ(published_[1].event, EventKind::kPortErr);
  EXPECT_EQ(published_[1].seq, 2u);
  EXPECT_EQ(published_[0].time_us, clock_.at.wall_us);
  EXPECT_EQ(published_[1].time_us, clock_.at.wall_us);
  const DeviceStats& s = set_->stats();
  EXPECT_EQ(s.events_read, 2u);
  EXPECT_EQ(s.events_acked, log_.acked);
  EXPECT_EQ(s.events_acked, 2u);
  EXPECT_EQ(s.batches, 1u);
}

TEST_F(DeviceSetTest, ADeviceFatalOfAnUnlistedDeviceIsItsRemovalAndItClosesAfterItsCallback) {
  catalog_->listed.clear();  // the kernel unlisted it before it sent DEVICE_FATAL
  const int scans_before = catalog_->scans;
  catalog_->last_opened->queue({event_type::kDeviceFatal, 0});
  stop_on_close_ = true;
  run();

  EXPECT_EQ(catalog_->scans, scans_before + 1);  // listed once, to tell removal from failure
  ASSERT_EQ(published_.size(), 1u);
  const Record& r = published_[0];
  EXPECT_EQ(r.event, EventKind::kDeviceRemoved);
  EXPECT_EQ(r.event_type, -1);
  EXPECT_EQ(r.severity, Severity::kWarning);
  EXPECT_EQ(r.seq, 1u);
  EXPECT_EQ(r.ports, (std::vector<PortInfo>{active_ib(1, 7)}));
  // Still open while its records went out (its own callback); closed by deferred work.
  EXPECT_EQ(closed_when_published_, (std::vector<int>{0}));
  EXPECT_EQ(log_.closed, 1);
  EXPECT_EQ(set_->watched(), 0u);
  EXPECT_EQ(set_->waiting(), 0u);
}

TEST_F(DeviceSetTest, ADeviceFatalWhileTheListFailsIsAFailureAndTheDeviceIsReopenedByTheRetry) {
  catalog_->scan_error = EIO;  // takes the event at its word
  catalog_->last_opened->queue({event_type::kDeviceFatal, 0});
  stop_after_records_ = 1;
  run();
  ASSERT_EQ(published_.size(), 1u);
  EXPECT_EQ(published_[0].event, EventKind::kDeviceFatal);
  EXPECT_EQ(published_[0].severity, Severity::kCritical);
  EXPECT_EQ(set_->waiting(), 1u);
  EXPECT_EQ(catalog_->devices().size(), 1u);  // the failed list kept the one before

  // The list works again; the retry timer (100 ms) reopens the device. Downtime comes from the
  // driven monotonic clock, whatever the wall clock does.
  catalog_->scan_error = 0;
  clock_.at.mono_us += 2'500'000;
  clock_.at.wall_us -= 60'000'000;
  stop_after_records_ = 3;  // device_recovered, port_state
  run();
  ASSERT_EQ(published_.size(), 3u);
  const Record& recovered = published_[1];
  EXPECT_EQ(recovered.event, EventKind::kDeviceRecovered);
  EXPECT_EQ(recovered.fatal_seq, 1u);
  EXPECT_EQ(recovered.down_since_us, published_[0].time_us);
  EXPECT_EQ(recovered.downtime_ms, 2500u);
  EXPECT_EQ(published_[2].event, EventKind::kPortState);
  EXPECT_EQ(log_.opened, 2);
  EXPECT_EQ(log_.closed, 1);
  EXPECT_EQ(set_->waiting(), 0u);
}

TEST_F(DeviceSetTest, AFailedResyncScanKeepsTheDevicesOpen) {
  catalog_->scan_error = ENOSYS;
  set_->resync(DeviceSet::Mode::kChange, "SIGUSR1");
  EXPECT_EQ(set_->watched(), 1u);
  EXPECT_EQ(log_.closed, 0);
  EXPECT_TRUE(published_.empty());
  ASSERT_EQ(set_->views().size(), 1u);
  EXPECT_EQ(set_->views()[0]->name, "mlx5_0");
}

}  // namespace
}  // namespace rdma_eventd::daemon
