#include "core/device_lifecycle.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <sstream>

#include "port_fixtures.h"
#include "schema/record_json.h"

namespace rdma_eventd::daemon {
namespace {

using namespace std::chrono_literals;
using Level = LogNote::Level;

constexpr uint64_t kGuid0 = 0x0c42a10300f65e44;
constexpr uint64_t kGuid1 = 0x0c42a103006d0b3a;

DeviceEntry entry(const std::string& name, uint64_t guid, int index) {
  return DeviceEntry{name, guid, index, "/sys/class/infiniband/" + name};
}

// What a device shows once opened: its ports, by name.
DeviceView loaded(const DeviceEntry& e, const std::vector<PortInfo>& ports) {
  DeviceView v;
  v.name = e.name;
  v.node_guid = e.node_guid;
  for (const auto& p : ports)
    v.ports.push_back(PortView{p, {}, {}, 128, 4});
  return v;
}

// The records a test expects, unstamped, as the lifecycle makes them.
Record device_rec(EventKind kind, const std::string& name, uint64_t guid) {
  Record r;
  r.event = kind;
  r.event_type = -1;
  r.device = name;
  r.node_guid = format_guid(guid);
  return r;
}

Record removed_rec(const std::string& name, uint64_t guid, std::vector<PortInfo> ports) {
  Record r = device_rec(EventKind::kDeviceRemoved, name, guid);
  r.ports = std::move(ports);
  return r;
}

Record port_state_rec(const std::string& name, uint64_t guid, const PortInfo& now,
                      std::optional<PortInfo> before = std::nullopt) {
  Record r = device_rec(EventKind::kPortState, name, guid);
  r.port = now.port;
  r.port_info = now;
  r.previous = before;
  return r;
}

Record recovered_rec(const std::string& name, uint64_t guid, int64_t down_since_us,
                     uint64_t fatal_seq, uint64_t downtime_ms) {
  Record r = device_rec(EventKind::kDeviceRecovered, name, guid);
  r.down_since_us = down_since_us;
  r.fatal_seq = fatal_seq;
  r.downtime_ms = downtime_ms;
  return r;
}

std::string lines_of(const std::vector<Record>& records) {
  std::ostringstream out;
  for (const auto& r : records)
    out << "\n  " << to_json(r);
  return out.str();
}

// Whole records, shown as JSON when they differ.
void expect_records(const std::vector<Record>& actual, const std::vector<Record>& expected) {
  ASSERT_EQ(actual.size(), expected.size()) << "got:" << lines_of(actual);
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_TRUE(actual[i] == expected[i])
        << "record " << i << "\n  got:      " << to_json(actual[i])
        << "\n  expected: " << to_json(expected[i]);
  }
}

// Drives a DeviceLifecycle as DeviceSet does: a listing, a clock, and devices that open with
// the ports the test gives them, or fail with the errno it gives them.
class DeviceLifecycleTest : public ::testing::Test {
 protected:
  struct Resync {
    bool listed = false;
    std::vector<Record> records;
    std::vector<DeviceEntry> renamed;
    std::vector<int> closed;
    std::vector<std::string> opened;
    std::vector<LogNote> notes;
  };

  Resync resync(ResyncMode mode = ResyncMode::kChange, int scan_error = 0) {
    ResyncStep step = life_.resync(Listing{scan_error, listed_}, "udev");
    Resync out{step.listed, std::move(step.records), std::move(step.renamed), std::move(step.close),
               {},          std::move(step.notes)};
    for (const DeviceEntry& e : step.open) {
      OpenStep s;
      if (auto err = open_errors_.find(e.name); err != open_errors_.end()) {
        s = life_.open_failed(e, err->second, now_);
      } else {
        s = life_.opened(e, loaded(e, ports_[e.name]), mode, now_);
        out.opened.push_back(e.name);
      }
      out.records.insert(out.records.end(), s.records.begin(), s.records.end());
      out.notes.insert(out.notes.end(), s.notes.begin(), s.notes.end());
    }
    return out;
  }

  // Two devices at start: mlx5_0 (one IB port) and mlx5_1 (two), both open.
  void start_with_two_devices() {
    listed_ = {entry("mlx5_0", kGuid0, 0), entry("mlx5_1", kGuid1, 1)};
    ports_["mlx5_0"] = {active_ib(1, 7)};
    ports_["mlx5_1"] = {active_ib(1, 8), active_ib(2, 9)};
    const Resync r = resync(ResyncMode::kStartup);
    ASSERT_EQ(r.opened, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
    ASSERT_TRUE(r.records.empty());
  }

  void advance(std::chrono::microseconds d) {
    now_.wall_us += d.count();
    now_.mono_us += d.count();
  }
  int64_t retry_in_ms() const {
    const auto next = life_.next_retry_us();
    return next ? (*next - now_.mono_us) / 1000 : -1;
  }

  DeviceLifecycle life_;
  std::vector<DeviceEntry> listed_;
  std::map<std::string, std::vector<PortInfo>> ports_;
  std::map<std::string, int> open_errors_;
  Instant now_{1795342530000000, 86400000000};
};

TEST_F(DeviceLifecycleTest, AtStartEverySelectedDeviceIsOpenedAndNothingIsPublished) {
  start_with_two_devices();
  const auto views = life_.views();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0]->name, "mlx5_0");
  EXPECT_EQ(views[1]->ports[1].info, active_ib(2, 9));
  EXPECT_EQ(life_.waiting(), 0u);
  EXPECT_FALSE(life_.next_retry_us());
  // Nothing changed: a second resync does nothing.
  const Resync again = resync();
  EXPECT_TRUE(again.records.empty() && again.opened.empty() && again.closed.empty());
}

TEST_F(DeviceLifecycleTest, ADeviceThatAppearsIsAddedWithOnePortStatePerPort) {
  listed_ = {entry("mlx5_0", kGuid0, 0)};
  ports_["mlx5_0"] = {active_ib(1, 7)};
  resync(ResyncMode::kStartup);
  listed_.push_back(entry("mlx5_1", kGuid1, 1));
  ports_["mlx5_1"] = {active_ib(1, 8), active_ib(2, 9)};

  const Resync r = resync();

  EXPECT_EQ(r.opened, (std::vector<std::string>{"mlx5_1"}));
  expect_records(r.records, {device_rec(EventKind::kDeviceAdded, "mlx5_1", kGuid1),
                             port_state_rec("mlx5_1", kGuid1, active_ib(1, 8)),
                             port_state_rec("mlx5_1", kGuid1, active_ib(2, 9))});
}

TEST_F(DeviceLifecycleTest, AReloadOpensWhatItNowSelectsWithoutPublishingIt) {
  life_.set_selector([](const DeviceEntry& e) { return e.name == "mlx5_0"; });
  listed_ = {entry("mlx5_0", kGuid0, 0), entry("mlx5_1", kGuid1, 1)};
  ports_["mlx5_0"] = {active_ib(1, 7)};
  ports_["mlx5_1"] = {active_ib(1, 8)};
  EXPECT_EQ(resync(ResyncMode::kStartup).opened, (std::vector<std::string>{"mlx5_0"}));

  life_.set_selector({});
  const Resync r = resync(ResyncMode::kReload);

  EXPECT_EQ(r.opened, (std::vector<std::string>{"mlx5_1"}));
  EXPECT_TRUE(r.records.empty());
}

TEST_F(DeviceLifecycleTest, ADeviceNoLongerListedIsRemovedWithItsLastStateAndClosedAtOnce) {
  start_with_two_devices();
  listed_.pop_back();

  const Resync r = resync();

  expect_records(r.records, {removed_rec("mlx5_1", kGuid1, {active_ib(1, 8), active_ib(2, 9)})});
  EXPECT_EQ(r.closed, (std::vector<int>{1}));
  EXPECT_EQ(r.notes, (std::vector<LogNote>{{Level::kInfo, "mlx5_1: removed (udev); closing it"}}));
  ASSERT_EQ(life_.views().size(), 1u);
  EXPECT_EQ(life_.view(1), nullptr);
  // Said once: the next resync has nothing to say.
  EXPECT_TRUE(resync().records.empty());
}

TEST_F(DeviceLifecycleTest, ARenamedDeviceStaysOpenAndIsKnownByItsNewName) {
  start_with_two_devices();
  listed_[0] = entry("ib7", kGuid0, 0);

  const Resync r = resync();

  Record renamed = device_rec(EventKind::kDeviceRenamed, "ib7", kGuid0);
  renamed.old_name = "mlx5_0";
  expect_records(r.records, {renamed});
  ASSERT_EQ(r.renamed.size(), 1u);
  EXPECT_EQ(r.renamed[0].name, "ib7");  // the open device follows the new name
  EXPECT_EQ(r.renamed[0].index, 0);
  EXPECT_TRUE(r.closed.empty());
  EXPECT_TRUE(r.opened.empty());
  EXPECT_EQ(r.notes, (std::vector<LogNote>{{Level::kInfo, "mlx5_0: renamed to ib7 (udev)"}}));
  EXPECT_EQ(life_.view(0)->name, "ib7");
  EXPECT_TRUE(resync().records.empty());
}

TEST_F(DeviceLifecycleTest, ADeviceTheFilterExcludesIsNeverOpenedAndIsClosedWithoutARecord) {
  life_.set_selector([](const DeviceEntry& e) { return e.name.starts_with("mlx5_"); });
  listed_ = {entry("mlx5_0", kGuid0, 0), entry("roce9", kGuid1, 1)};
  ports_["mlx5_0"] = {active_ib(1, 7)};

  const Resync start = resync(ResyncMode::kStartup);

  EXPECT_EQ(start.opened, (std::vector<std::string>{"mlx5_0"}));
  EXPECT_EQ(start.notes,
            (std::vector<LogNote>{
                {Level::kDebug, "roce9: left alone (not selected by devices.include/exclude)"}}));

  // Renamed out of the filter: the rename is news, then it is closed.
  listed_[0] = entry("ib0", kGuid0, 0);
  const Resync r = resync();

  Record renamed = device_rec(EventKind::kDeviceRenamed, "ib0", kGuid0);
  renamed.old_name = "mlx5_0";
  expect_records(r.records, {renamed});
  EXPECT_EQ(r.closed, (std::vector<int>{0}));
  EXPECT_EQ(r.notes[1],
            (LogNote{Level::kInfo, "ib0: excluded by the configuration now, closing it"}));
  EXPECT_TRUE(life_.views().empty());
}

TEST_F(DeviceLifecycleTest, AFatalErrorOfAListedDeviceIsAFailureRetriedOnceItIsClosed) {
  start_with_two_devices();
  const FatalMeaning meaning = DeviceLifecycle::meaning_of_fatal(0, Listing{0, listed_});
  EXPECT_EQ(meaning, FatalMeaning::kFailure);

  const auto notes = life_.device_fatal(0, meaning, 42, now_);

  EXPECT_EQ(notes, (std::vector<LogNote>{{Level::kError,
                                          "mlx5_0: fatal error; closing it, reopening it once "
                                          "it works again"}}));
  EXPECT_TRUE(life_.is_closing(0));
  ASSERT_EQ(life_.views().size(), 1u);  // a closing device is not shown
  EXPECT_EQ(life_.waiting(), 1u);
  EXPECT_EQ(retry_in_ms(), 100);
  // Until its context is closed, a resync leaves it alone.
  const Resync meanwhile = resync();
  EXPECT_TRUE(meanwhile.records.empty() && meanwhile.opened.empty() && meanwhile.closed.empty());
}

TEST_F(DeviceLifecycleTest, AFatalErrorOfAnUnlistedDeviceIsItsRemovalAndSaidOnce) {
  start_with_two_devices();
  listed_.pop_back();  // the kernel unlists a device it removes before it tells the contexts
  const FatalMeaning meaning = DeviceLifecycle::meaning_of_fatal(1, Listing{0, listed_});
  EXPECT_EQ(meaning, FatalMeaning::kRemoval);

  const auto notes = life_.device_fatal(1, meaning, 0, now_);

  EXPECT_EQ(notes,
            (std::vector<LogNote>{
                {Level::kInfo,
                 "mlx5_1: removed (its event stream ended with DEVICE_FATAL); closing it"}}));
  EXPECT_EQ(life_.waiting(), 0u);
  EXPECT_FALSE(life_.next_retry_us());
  // udev says it too, before and after the context is closed: nothing more is published.
  EXPECT_TRUE(resync().records.empty());
  life_.closed(1);
  const Resync after = resync();
  EXPECT_TRUE(after.records.empty());
  EXPECT_TRUE(after.opened.empty());
}

TEST_F(DeviceLifecycleTest, AFailedScanDuringAFatalErrorTakesTheEventAtItsWord) {
  start_with_two_devices();
  EXPECT_EQ(DeviceLifecycle::meaning_of_fatal(1, Listing{EIO, {}}), FatalMeaning::kFailure);
  EXPECT_EQ(DeviceLifecycle::meaning_of_fatal(1, Listing{ENOSYS, {}}), FatalMeaning::kFailure);
}

TEST_F(DeviceLifecycleTest, AFatalErrorThenRecoveryPublishesTheDowntimeAndWhatChanged) {
  start_with_two_devices();
  const Instant failed_at = now_;
  life_.device_fatal(0, FatalMeaning::kFailure, 42, now_);
  life_.closed(0);

  // The driver resets the device: it is unlisted (its removal is news, once) ...
  advance(700ms);
  listed_.erase(listed_.begin());
  Resync r = resync();
  expect_records(r.records, {removed_rec("mlx5_0", kGuid0, {active_ib(1, 7)})});
  EXPECT_EQ(
      r.notes,
      (std::vector<LogNote>{{Level::kInfo, "mlx5_0: removed while down after its fatal error"}}));
  EXPECT_EQ(life_.waiting(), 0u);  // nothing to retry while it is not listed
  EXPECT_TRUE(resync().records.empty());

  // ... and registered again with a new index and another LID. The wall clock was stepped back
  // an hour meanwhile: the downtime is measured on the monotonic clock.
  advance(800ms);
  now_.wall_us -= 3600'000'000;
  listed_.push_back(entry("mlx5_0", kGuid0, 2));
  ports_["mlx5_0"] = {active_ib(1, 12)};
  r = resync();

  expect_records(r.records, {recovered_rec("mlx5_0", kGuid0, failed_at.wall_us, 42, 1500),
                             port_state_rec("mlx5_0", kGuid0, active_ib(1, 12), active_ib(1, 7))});
  EXPECT_EQ(r.notes,
            (std::vector<LogNote>{{Level::kInfo, "mlx5_0: recovered after 1500 ms down"}}));
  // Recovered once: the next fatal error and recovery start afresh.
  EXPECT_TRUE(resync().records.empty());
  EXPECT_FALSE(life_.next_retry_us());
}

TEST_F(DeviceLifecycleTest, ADeviceThatCannotBeOpenedIsRetriedWithBackoffUpTo30s) {
  listed_ = {entry("mlx5_0", kGuid0, 0)};
  ports_["mlx5_0"] = {active_ib(1, 7)};
  open_errors_["mlx5_0"] = EIO;

  Resync r = resync(ResyncMode::kStartup);

  EXPECT_EQ(r.notes, (std::vector<LogNote>{{Level::kError,
                                            "mlx5_0: cannot open: Input/output error; "
                                            "retrying, at most every 30 s"}}));
  EXPECT_EQ(life_.waiting(), 1u);
  std::vector<int64_t> delays{retry_in_ms()};
  for (int i = 0; i < 10; ++i) {
    advance(std::chrono::milliseconds(delays.back()));
    r = resync();
    EXPECT_TRUE(r.records.empty());
    EXPECT_TRUE(r.notes.empty()) << "said once, at the first failure";
    delays.push_back(retry_in_ms());
  }
  EXPECT_EQ(delays, (std::vector<int64_t>{100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000,
                                          30000}));

  // It opens at last: news, since it was not open before, and no more retries.
  open_errors_.clear();
  advance(30s);
  r = resync();
  EXPECT_EQ(r.opened, (std::vector<std::string>{"mlx5_0"}));
  expect_records(r.records, {device_rec(EventKind::kDeviceAdded, "mlx5_0", kGuid0),
                             port_state_rec("mlx5_0", kGuid0, active_ib(1, 7))});
  EXPECT_EQ(r.notes,
            (std::vector<LogNote>{{Level::kInfo, "mlx5_0: opened after 11 failed attempts"}}));
  EXPECT_EQ(life_.waiting(), 0u);
  EXPECT_FALSE(life_.next_retry_us());
}

TEST_F(DeviceLifecycleTest, AfterAFatalErrorTheRetriesBackOffUntilTheDeviceOpens) {
  start_with_two_devices();
  life_.device_fatal(0, FatalMeaning::kFailure, 42, now_);
  life_.closed(0);
  const Instant failed_at = now_;
  open_errors_["mlx5_0"] = EIO;  // still listed, still failing

  advance(100ms);
  Resync r = resync();
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.notes.size(), 1u);  // "cannot open", once
  EXPECT_EQ(retry_in_ms(), 100);
  advance(100ms);
  resync();
  EXPECT_EQ(retry_in_ms(), 200);

  // Same index, same ports: recovered, and the port states show nothing changed.
  open_errors_.clear();
  advance(200ms);
  r = resync();
  expect_records(r.records, {recovered_rec("mlx5_0", kGuid0, failed_at.wall_us, 42, 400),
                             port_state_rec("mlx5_0", kGuid0, active_ib(1, 7), active_ib(1, 7))});
  EXPECT_EQ(r.notes[0], (LogNote{Level::kInfo, "mlx5_0: opened after 2 failed attempts"}));
  EXPECT_FALSE(life_.next_retry_us());
}

TEST_F(DeviceLifecycleTest, RetriesEndWhenTheDeviceLeavesTheList) {
  listed_ = {entry("mlx5_0", kGuid0, 0)};
  open_errors_["mlx5_0"] = EIO;
  resync(ResyncMode::kStartup);
  ASSERT_EQ(life_.waiting(), 1u);
  listed_.clear();
  const Resync r = resync();
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(life_.waiting(), 0u);
  EXPECT_FALSE(life_.next_retry_us());
}

TEST_F(DeviceLifecycleTest, AFailedScanKeepsTheKnownDevicesAndIsSaidOncePerError) {
  start_with_two_devices();

  Resync r = resync(ResyncMode::kChange, EIO);

  EXPECT_FALSE(r.listed);
  EXPECT_TRUE(r.records.empty() && r.closed.empty() && r.opened.empty());
  EXPECT_EQ(r.notes, (std::vector<LogNote>{{Level::kError,
                                            "cannot list RDMA devices: Input/output error; "
                                            "waiting (SIGUSR1 rescans)"}}));
  EXPECT_EQ(life_.views().size(), 2u);
  EXPECT_TRUE(resync(ResyncMode::kChange, EIO).notes.empty());
  EXPECT_EQ(resync(ResyncMode::kChange, ENOSYS).notes,
            (std::vector<LogNote>{{Level::kWarning,
                                   "no RDMA support in the kernel (ENOSYS); waiting for devices "
                                   "(SIGUSR1 rescans)"}}));
  // The list works again and shows the same devices: nothing happened.
  r = resync();
  EXPECT_TRUE(r.listed);
  EXPECT_TRUE(r.records.empty() && r.closed.empty() && r.opened.empty() && r.notes.empty());
}

TEST_F(DeviceLifecycleTest, NoDevicesAndNoneSelectedAreEachSaidOnce) {
  EXPECT_EQ(
      resync(ResyncMode::kStartup).notes,
      (std::vector<LogNote>{
          {Level::kWarning, "no RDMA devices found; waiting for devices (SIGUSR1 rescans)"}}));
  EXPECT_TRUE(resync().notes.empty());
  life_.set_selector([](const DeviceEntry&) { return false; });
  listed_ = {entry("mlx5_0", kGuid0, 0)};
  const Resync r = resync();
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[1],
            (LogNote{Level::kWarning, "no RDMA device is selected by the configuration; waiting"}));
  EXPECT_EQ(resync().notes.size(), 1u);  // only the debug line about the device left alone
}

TEST_F(DeviceLifecycleTest, BeyondSixtyFourDownDevicesTheOldestIsForgotten) {
  // 65 devices fail one after the other and stay down.
  for (int i = 0; i <= 64; ++i)
    listed_.push_back(entry("dev" + std::to_string(i), 0x1000 + i, i));
  resync(ResyncMode::kStartup);
  for (int i = 0; i <= 64; ++i) {
    const auto notes = life_.device_fatal(i, FatalMeaning::kFailure, 100 + i, now_);
    if (i < 64) {
      EXPECT_EQ(notes.size(), 1u) << i;
      continue;
    }
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0], (LogNote{Level::kWarning,
                                 "dev0: forgetting that it is down: more than 64 devices are"}));
  }
  for (int i = 0; i <= 64; ++i)
    life_.closed(i);

  // They come back: the forgotten one is news (added), the others recovered.
  advance(1s);
  const Resync r = resync();
  ASSERT_EQ(r.opened.size(), 65u);
  ASSERT_GE(r.records.size(), 2u);
  EXPECT_TRUE(r.records[0] == device_rec(EventKind::kDeviceAdded, "dev0", 0x1000))
      << to_json(r.records[0]);
  size_t recovered = 0;
  for (const Record& rec : r.records) {
    if (rec.event != EventKind::kDeviceRecovered) continue;
    ++recovered;
    EXPECT_EQ(rec.fatal_seq, 100 + std::stoul(rec.device.substr(3))) << rec.device;
    EXPECT_EQ(rec.downtime_ms, 1000u);
  }
  EXPECT_EQ(recovered, 64u);
}

}  // namespace
}  // namespace rdma_eventd::daemon
