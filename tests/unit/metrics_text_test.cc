// The Prometheus exposition text of rdma-eventctl metrics (eventctl/metrics_text.h), whole, from
// a status and a health reply; label escaping; the text while the daemon is down.
#include "metrics_text.h"

#include <gtest/gtest.h>

#include "port_fixtures.h"

namespace rdma_eventctl {
namespace {

using namespace rdma_eventd;

StatusReply sample_status() {
  StatusReply s;
  s.daemon.version = "0.1.0";
  s.daemon.started_us = 1795342530500000;
  s.counters.events_read = 9;
  s.counters.records = 12;
  s.counters.devices_waiting = 1;
  s.subscribers.count = 2;
  s.subscribers.records_lost = 3;
  s.journal = {true, 11, 1, 2, 0, 0, 0, true, 40, 4};
  PortInfo p = daemon::active_ib(1, 7);
  PortInfo q = p;
  q.port = 2;
  q.state = PortState::kDown;
  q.phys_state = PhysState::kPolling;
  q.lid = 0;
  s.devices = {{"mlx5_0", "0c42:a103:00f6:5e44", {{p, 1, 1}, {q, 1, 1}}}};
  s.event_counts.ports = {{"mlx5_0", 0, {{"device_added", 1}}, 0},
                          {"mlx5_0", 2, {{"port_err", 2}, {"port_health", 1}}, 2}};
  // Port 1's link loses bits; port 2's symbol_error is pegged. The raw counters are not
  // exported (node_exporter's), so their values here must not show up in the text.
  s.link_health.enabled = true;
  s.link_health.interval_s = 60;
  s.link_health.samples = 40;
  s.link_health.counter_reads = 120;
  s.link_health.read_failures = 1;
  s.link_health.read_retries = 3;
  s.link_health.ports = {{"mlx5_0",
                          1,
                          true,
                          "bit_errors",
                          1e-12,
                          "",
                          {{"symbol_error", 4242}, {"link_downed", 3}},
                          "bad",
                          "",
                          1795342530000000},
                         {"mlx5_0",
                          2,
                          false,
                          "",
                          std::nullopt,
                          "symbol_error",
                          {{"symbol_error", 65535}},
                          "unknown",
                          "pegged",
                          1795342531000000}};
  s.link_health.reads_hung = 2;
  // The adapter's fw_fatal reporter in error; a port reporter of an adapter with no RDMA device.
  s.devlink = {true, true, "", 4, 1, 1, 0, 3, {}};
  s.devlink.reporters = {
      {"pci/0000:08:00.0", -1, "fw_fatal", "error", 2, 1, 1795342530000000, {"mlx5_0"}},
      {"pci/0000:09:00.0", 0, "tx", "healthy", 5, 5, 1795342530000000, {}}};
  return s;
}

HealthReply sample_health() {
  HealthReply h;
  h.enabled = true;
  h.host = "down";
  h.ports = {
      {"mlx5_0", "0c42:a103:00f6:5e44", 1, "healthy", "link_up", 1795342530000000, true, 0, true},
      {"mlx5_0", "0c42:a103:00f6:5e44", 2, "down", "link_down", 1795342531000000, false, 2, true}};
  return h;
}

TEST(MetricsText, WritesEveryFamilyWithHelpTypeAndLabels) {
  EXPECT_EQ(metrics_text(sample_status(), sample_health()),
            R"(# HELP rdma_eventd_up 1 when the daemon answered, 0 when it cannot be reached.
# TYPE rdma_eventd_up gauge
rdma_eventd_up 1
# HELP rdma_eventd_info The daemon's version, as a label; always 1.
# TYPE rdma_eventd_info gauge
rdma_eventd_info{version="0.1.0"} 1
# HELP rdma_eventd_start_time_seconds When the daemon started, in seconds since the Unix epoch.
# TYPE rdma_eventd_start_time_seconds gauge
rdma_eventd_start_time_seconds 1795342530.5
# HELP rdma_eventd_devices RDMA devices the daemon has open.
# TYPE rdma_eventd_devices gauge
rdma_eventd_devices 1
# HELP rdma_eventd_devices_waiting Devices listed but not openable yet (retried with backoff).
# TYPE rdma_eventd_devices_waiting gauge
rdma_eventd_devices_waiting 1
# HELP rdma_eventd_subscribers Clients connected to the subscriber socket.
# TYPE rdma_eventd_subscribers gauge
rdma_eventd_subscribers 2
# HELP rdma_eventd_events_read_total Async events read from the devices.
# TYPE rdma_eventd_events_read_total counter
rdma_eventd_events_read_total 9
# HELP rdma_eventd_records_published_total Records the daemon published (events, its own records, port health).
# TYPE rdma_eventd_records_published_total counter
rdma_eventd_records_published_total 12
# HELP rdma_eventd_records_lost_total Records dropped for subscribers that read too slowly (each told with a lost line).
# TYPE rdma_eventd_records_lost_total counter
rdma_eventd_records_lost_total 3
# HELP rdma_eventd_journal_enabled 1 when records go to the journal.
# TYPE rdma_eventd_journal_enabled gauge
rdma_eventd_journal_enabled 1
# HELP rdma_eventd_journal_entries_written_total Journal entries written (records and summaries).
# TYPE rdma_eventd_journal_entries_written_total counter
rdma_eventd_journal_entries_written_total 11
# HELP rdma_eventd_journal_entries_failed_total Journal entries journald refused.
# TYPE rdma_eventd_journal_entries_failed_total counter
rdma_eventd_journal_entries_failed_total 1
# HELP rdma_eventd_journal_entries_dropped_total Journal entries dropped because the writer's queue was full.
# TYPE rdma_eventd_journal_entries_dropped_total counter
rdma_eventd_journal_entries_dropped_total 2
# HELP rdma_eventd_journal_records_summarized_total Records the journal budget kept out of the journal, counted in summaries instead.
# TYPE rdma_eventd_journal_records_summarized_total counter
rdma_eventd_journal_records_summarized_total 40
# HELP rdma_eventd_journal_summaries_total Summary entries the journal budget wrote.
# TYPE rdma_eventd_journal_summaries_total counter
rdma_eventd_journal_summaries_total 4
# HELP rdma_eventd_events_untracked_total Records not counted by port: the daemon's table of ports was full.
# TYPE rdma_eventd_events_untracked_total counter
rdma_eventd_events_untracked_total 0
# HELP rdma_eventd_port_info Every port the daemon watches, with its node GUID and link layer; always 1.
# TYPE rdma_eventd_port_info gauge
rdma_eventd_port_info{device="mlx5_0",port="1",node_guid="0c42:a103:00f6:5e44",link_layer="infiniband"} 1
rdma_eventd_port_info{device="mlx5_0",port="2",node_guid="0c42:a103:00f6:5e44",link_layer="infiniband"} 1
# HELP rdma_eventd_port_state_id Logical state: 1 down, 2 init, 3 armed, 4 active, 5 active_defer.
# TYPE rdma_eventd_port_state_id gauge
rdma_eventd_port_state_id{device="mlx5_0",port="1"} 4
rdma_eventd_port_state_id{device="mlx5_0",port="2"} 1
# HELP rdma_eventd_port_physical_state_id Physical state: 1 sleep, 2 polling, 3 disabled, 4 training, 5 link up, 6 link error recovery, 7 phy test.
# TYPE rdma_eventd_port_physical_state_id gauge
rdma_eventd_port_physical_state_id{device="mlx5_0",port="1"} 5
rdma_eventd_port_physical_state_id{device="mlx5_0",port="2"} 2
# HELP rdma_eventd_port_rate_bytes_per_second Data rate of the link (width times lane speed), in bytes per second; no sample where the width or the speed is unknown.
# TYPE rdma_eventd_port_rate_bytes_per_second gauge
rdma_eventd_port_rate_bytes_per_second{device="mlx5_0",port="1"} 25000000000
rdma_eventd_port_rate_bytes_per_second{device="mlx5_0",port="2"} 25000000000
# HELP rdma_eventd_port_lid The port's LID (0: none, as on Ethernet).
# TYPE rdma_eventd_port_lid gauge
rdma_eventd_port_lid{device="mlx5_0",port="1"} 7
rdma_eventd_port_lid{device="mlx5_0",port="2"} 0
# HELP rdma_eventd_health_enabled 1 when the daemon judges port health.
# TYPE rdma_eventd_health_enabled gauge
rdma_eventd_health_enabled 1
# HELP rdma_eventd_port_health The port's health verdict, as the health label; always 1 (docs/health.md).
# TYPE rdma_eventd_port_health gauge
rdma_eventd_port_health{device="mlx5_0",port="1",health="healthy",reason="link_up"} 1
rdma_eventd_port_health{device="mlx5_0",port="2",health="down",reason="link_down"} 1
# HELP rdma_eventd_port_in_service 1 when the port has been up since the daemon first saw it, so its health counts.
# TYPE rdma_eventd_port_in_service gauge
rdma_eventd_port_in_service{device="mlx5_0",port="1"} 1
rdma_eventd_port_in_service{device="mlx5_0",port="2"} 1
# HELP rdma_eventd_port_health_since_seconds When the port got its verdict, in seconds since the Unix epoch.
# TYPE rdma_eventd_port_health_since_seconds gauge
rdma_eventd_port_health_since_seconds{device="mlx5_0",port="1"} 1795342530
rdma_eventd_port_health_since_seconds{device="mlx5_0",port="2"} 1795342531
# HELP rdma_eventd_port_downs_in_window Times the port went down within the health model's flap window.
# TYPE rdma_eventd_port_downs_in_window gauge
rdma_eventd_port_downs_in_window{device="mlx5_0",port="1"} 0
rdma_eventd_port_downs_in_window{device="mlx5_0",port="2"} 2
# HELP rdma_eventd_port_events_total Records published about the port, by event.
# TYPE rdma_eventd_port_events_total counter
rdma_eventd_port_events_total{device="mlx5_0",port="2",event="port_err"} 2
rdma_eventd_port_events_total{device="mlx5_0",port="2",event="port_health"} 1
# HELP rdma_eventd_device_events_total Records published about a whole device (device_fatal, device_added, ...), by event.
# TYPE rdma_eventd_device_events_total counter
rdma_eventd_device_events_total{device="mlx5_0",event="device_added"} 1
# HELP rdma_eventd_port_down_transitions_total Times the port's logical state left active (link flaps).
# TYPE rdma_eventd_port_down_transitions_total counter
rdma_eventd_port_down_transitions_total{device="mlx5_0",port="1"} 0
rdma_eventd_port_down_transitions_total{device="mlx5_0",port="2"} 2
# HELP rdma_eventd_port_health_transitions_total Times the port's health verdict changed (port_health records).
# TYPE rdma_eventd_port_health_transitions_total counter
rdma_eventd_port_health_transitions_total{device="mlx5_0",port="1"} 0
rdma_eventd_port_health_transitions_total{device="mlx5_0",port="2"} 1
# HELP rdma_eventd_link_health_enabled 1 when the daemon reads the ports' error counters and judges their links.
# TYPE rdma_eventd_link_health_enabled gauge
rdma_eventd_link_health_enabled 1
# HELP rdma_eventd_link_read_failures_total Devices whose error counters could not be read (not read again until reopened).
# TYPE rdma_eventd_link_read_failures_total counter
rdma_eventd_link_read_failures_total 1
# HELP rdma_eventd_link_read_retries_total Reads of error counters that failed in a way that may pass (each retried later).
# TYPE rdma_eventd_link_read_retries_total counter
rdma_eventd_link_read_retries_total 3
# HELP rdma_eventd_link_reads_hung_total Reads of error counters that had not returned by link_health.read_deadline_s.
# TYPE rdma_eventd_link_reads_hung_total counter
rdma_eventd_link_reads_hung_total 2
# HELP rdma_eventd_link_unknown 1 when the port's link quality is not judged now (its link down, its counters unreadable, hung or pegged, ...), by reason; 0 when its last read judged it.
# TYPE rdma_eventd_link_unknown gauge
rdma_eventd_link_unknown{device="mlx5_0",port="1",reason=""} 0
rdma_eventd_link_unknown{device="mlx5_0",port="2",reason="pegged"} 1
# HELP rdma_eventd_link_bad 1 when the port's error counters make its link bad (docs/health.md, Link quality).
# TYPE rdma_eventd_link_bad gauge
rdma_eventd_link_bad{device="mlx5_0",port="1"} 1
rdma_eventd_link_bad{device="mlx5_0",port="2"} 0
# HELP rdma_eventd_link_fault 1 for each fault that makes the port's link bad, 0 for the others, by fault.
# TYPE rdma_eventd_link_fault gauge
rdma_eventd_link_fault{device="mlx5_0",port="1",fault="bit_errors"} 1
rdma_eventd_link_fault{device="mlx5_0",port="1",fault="link_recoveries"} 0
rdma_eventd_link_fault{device="mlx5_0",port="1",fault="transport_errors"} 0
rdma_eventd_link_fault{device="mlx5_0",port="2",fault="bit_errors"} 0
rdma_eventd_link_fault{device="mlx5_0",port="2",fault="link_recoveries"} 0
rdma_eventd_link_fault{device="mlx5_0",port="2",fault="transport_errors"} 0
# HELP rdma_eventd_link_ber_estimate symbol_error growth per bit over the longest bit error window: the bit error rate after FEC.
# TYPE rdma_eventd_link_ber_estimate gauge
rdma_eventd_link_ber_estimate{device="mlx5_0",port="1"} 1e-12
# HELP rdma_eventd_link_pegged 1 for each error counter at its maximum: its errors are unknown until it is reset.
# TYPE rdma_eventd_link_pegged gauge
rdma_eventd_link_pegged{device="mlx5_0",port="2",counter="symbol_error"} 1
# HELP rdma_eventd_devlink_available 1 when the daemon follows the kernel's devlink health reporters.
# TYPE rdma_eventd_devlink_available gauge
rdma_eventd_devlink_available 1
# HELP rdma_eventd_devlink_overruns_total Times the kernel dropped devlink notifications (the reporters were read again).
# TYPE rdma_eventd_devlink_overruns_total counter
rdma_eventd_devlink_overruns_total 1
# HELP rdma_eventd_devlink_reporter_error 1 while the devlink health reporter is in error, 0 when healthy.
# TYPE rdma_eventd_devlink_reporter_error gauge
rdma_eventd_devlink_reporter_error{handle="pci/0000:08:00.0",reporter="fw_fatal",port_index="",ports="mlx5_0"} 1
rdma_eventd_devlink_reporter_error{handle="pci/0000:09:00.0",reporter="tx",port_index="0",ports=""} 0
# HELP rdma_eventd_devlink_reporter_errors_total Errors the reporter reported since it was created (the kernel's count).
# TYPE rdma_eventd_devlink_reporter_errors_total counter
rdma_eventd_devlink_reporter_errors_total{handle="pci/0000:08:00.0",reporter="fw_fatal",port_index="",ports="mlx5_0"} 2
rdma_eventd_devlink_reporter_errors_total{handle="pci/0000:09:00.0",reporter="tx",port_index="0",ports=""} 5
# HELP rdma_eventd_devlink_reporter_recoveries_total Recoveries of the reporter since it was created (the kernel's count).
# TYPE rdma_eventd_devlink_reporter_recoveries_total counter
rdma_eventd_devlink_reporter_recoveries_total{handle="pci/0000:08:00.0",reporter="fw_fatal",port_index="",ports="mlx5_0"} 1
rdma_eventd_devlink_reporter_recoveries_total{handle="pci/0000:09:00.0",reporter="tx",port_index="0",ports=""} 5
)");
}

TEST(MetricsText, EveryLinkFaultIsASeriesOfItsPortAndANewOneIsNamed) {
  // Two faults at once, and one this client does not know (a newer daemon's): the known ones
  // have a series whether on or not, so that one coming is a change of value; two counters
  // pegged are two series.
  StatusReply s;
  s.link_health.enabled = true;
  s.link_health.ports = {{"mlx5_1",
                          1,
                          true,
                          "link_recoveries,module_faults,bit_errors",
                          2.5e-13,
                          "symbol_error,link_downed",
                          {}}};
  const std::string text = metrics_text(s, HealthReply{});
  const size_t from = text.find("# HELP rdma_eventd_link_bad ");
  const size_t to = text.find("# HELP rdma_eventd_devlink_available ");
  ASSERT_NE(from, std::string::npos) << text;
  EXPECT_EQ(
      text.substr(from, to - from),
      R"(# HELP rdma_eventd_link_bad 1 when the port's error counters make its link bad (docs/health.md, Link quality).
# TYPE rdma_eventd_link_bad gauge
rdma_eventd_link_bad{device="mlx5_1",port="1"} 1
# HELP rdma_eventd_link_fault 1 for each fault that makes the port's link bad, 0 for the others, by fault.
# TYPE rdma_eventd_link_fault gauge
rdma_eventd_link_fault{device="mlx5_1",port="1",fault="bit_errors"} 1
rdma_eventd_link_fault{device="mlx5_1",port="1",fault="link_recoveries"} 1
rdma_eventd_link_fault{device="mlx5_1",port="1",fault="transport_errors"} 0
rdma_eventd_link_fault{device="mlx5_1",port="1",fault="module_faults"} 1
# HELP rdma_eventd_link_ber_estimate symbol_error growth per bit over the longest bit error window: the bit error rate after FEC.
# TYPE rdma_eventd_link_ber_estimate gauge
rdma_eventd_link_ber_estimate{device="mlx5_1",port="1"} 2.5e-13
# HELP rdma_eventd_link_pegged 1 for each error counter at its maximum: its errors are unknown until it is reset.
# TYPE rdma_eventd_link_pegged gauge
rdma_eventd_link_pegged{device="mlx5_1",port="1",counter="symbol_error"} 1
rdma_eventd_link_pegged{device="mlx5_1",port="1",counter="link_downed"} 1
)");
}

TEST(MetricsText, ADaemonWithoutCounterHealthHasTheFamiliesAndNoPort) {
  // Counter health off, or a daemon too old to send the block (read as off): 0, and no
  // series of any port.
  const std::string text = metrics_text(StatusReply{}, HealthReply{});
  const size_t from = text.find("# HELP rdma_eventd_link_health_enabled ");
  const size_t to = text.find("# HELP rdma_eventd_devlink_available ");
  ASSERT_NE(from, std::string::npos) << text;
  EXPECT_EQ(
      text.substr(from, to - from),
      R"(# HELP rdma_eventd_link_health_enabled 1 when the daemon reads the ports' error counters and judges their links.
# TYPE rdma_eventd_link_health_enabled gauge
rdma_eventd_link_health_enabled 0
# HELP rdma_eventd_link_read_failures_total Devices whose error counters could not be read (not read again until reopened).
# TYPE rdma_eventd_link_read_failures_total counter
rdma_eventd_link_read_failures_total 0
# HELP rdma_eventd_link_read_retries_total Reads of error counters that failed in a way that may pass (each retried later).
# TYPE rdma_eventd_link_read_retries_total counter
rdma_eventd_link_read_retries_total 0
# HELP rdma_eventd_link_reads_hung_total Reads of error counters that had not returned by link_health.read_deadline_s.
# TYPE rdma_eventd_link_reads_hung_total counter
rdma_eventd_link_reads_hung_total 0
# HELP rdma_eventd_link_unknown 1 when the port's link quality is not judged now (its link down, its counters unreadable, hung or pegged, ...), by reason; 0 when its last read judged it.
# TYPE rdma_eventd_link_unknown gauge
# HELP rdma_eventd_link_bad 1 when the port's error counters make its link bad (docs/health.md, Link quality).
# TYPE rdma_eventd_link_bad gauge
# HELP rdma_eventd_link_fault 1 for each fault that makes the port's link bad, 0 for the others, by fault.
# TYPE rdma_eventd_link_fault gauge
# HELP rdma_eventd_link_ber_estimate symbol_error growth per bit over the longest bit error window: the bit error rate after FEC.
# TYPE rdma_eventd_link_ber_estimate gauge
# HELP rdma_eventd_link_pegged 1 for each error counter at its maximum: its errors are unknown until it is reset.
# TYPE rdma_eventd_link_pegged gauge
)");
}

TEST(MetricsText, AnUnknownRateIsNoSampleNeverALinkAtZero) {
  // Port 1 at 4x XDR, port 2 whose speed is not known (a speed this version cannot read).
  StatusReply s = sample_status();
  s.devices[0].ports[0].info.speed = LinkSpeed::kXdr;
  s.devices[0].ports[1].info.speed = LinkSpeed::kUnknown;
  const std::string text = metrics_text(s, sample_health());
  EXPECT_NE(text.find("rdma_eventd_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"} "
                      "100000000000\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rdma_eventd_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"2\"}"),
            std::string::npos)
      << text;
}

TEST(MetricsText, EscapesLabelValues) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  StatusReply s;
  s.event_counts.ports = {{"odd\"name", 1, {{"port_err", 1}}, 0}};
  const std::string text = metrics_text(s, HealthReply{});
  EXPECT_NE(text.find("rdma_eventd_port_events_total{device=\"odd\\\"name\",port=\"1\","
                      "event=\"port_err\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(MetricsText, CountsEveryEventNameTheDaemonSends) {
  // A name this client does not know yet (a newer daemon's kind) is a label like any other.
  StatusReply s;
  s.event_counts.ports = {{"mlx5_0", 1, {{"module_plugged", 4}}, 0}};
  EXPECT_NE(metrics_text(s, HealthReply{})
                .find("rdma_eventd_port_events_total{device=\"mlx5_0\",port=\"1\","
                      "event=\"module_plugged\"} 4\n"),
            std::string::npos);
}

TEST(MetricsText, TheDaemonDownIsUpZeroOnly) {
  EXPECT_EQ(metrics_text_daemon_down(),
            "# HELP rdma_eventd_up 1 when the daemon answered, 0 when it cannot be reached.\n"
            "# TYPE rdma_eventd_up gauge\n"
            "rdma_eventd_up 0\n");
}

}  // namespace
}  // namespace rdma_eventctl
