#include "daemon_process.h"

#include <gtest/gtest.h>

#include "journal_sandbox.h"

namespace rdma_eventd::test {
namespace {

// The harness's options, once the journal sandbox runs: records go to the sandbox's journald,
// never the host's. The sandbox comes first, before the daemon and before the threads the
// harness starts (a process with threads cannot enter a mount namespace of its own).
rdmatest::DaemonOptions in_the_sandbox(const DaemonOptions& o) {
  JournalSandbox::instance();
  return {.config_json = o.config_json,
          .extra_args = o.extra_args,
          .wait_ready = o.wait_ready,
          .print_records = o.print_records,
          .socket = o.socket,
          .env = o.env,
          .journal = true};
}

}  // namespace

DaemonProcess::DaemonProcess(const rdmatest::SimFabric& sim, const DaemonOptions& options)
    : rdmatest::DaemonProcess(sim, in_the_sandbox(options)) {}

Record DaemonProcess::next_record(rdmatest::Duration timeout) {
  const std::string line = next_record_line(timeout);
  std::string error;
  auto r = record_from_json(line, &error);
  if (!r) throw rdmatest::HarnessError("not a record (" + error + "): " + line);
  return *r;
}

std::vector<nlohmann::json> DaemonProcess::journal_entries(size_t count,
                                                           rdmatest::Duration timeout) {
  const std::vector<std::string> matches = {"RDMA_STREAM=" + stream()};
  JournalSandbox& journal = JournalSandbox::instance();
  std::vector<std::string> args = {"-o", "json"};  // one line per entry
  args.insert(args.end(), matches.begin(), matches.end());
  journal.follow(args, count, timeout);
  return journal.entries(matches);
}

void expect_no_records(const std::vector<Record>& records, const std::string& when) {
  for (const Record& r : records)
    ADD_FAILURE() << "unexpected record " << when << ": " << event_name(r.event) << " " << r.device
                  << "/" << r.port << " " << r.health << " " << r.reason;
}

nlohmann::json journal_entry_of(DaemonProcess& d, const Record& r) {
  const std::vector<std::string> matches = {"RDMA_STREAM=" + d.stream(),
                                            "RDMA_SEQ=" + std::to_string(r.seq)};
  std::vector<std::string> args = {"-o", "json"};
  args.insert(args.end(), matches.begin(), matches.end());
  JournalSandbox::instance().follow(args, 1, std::chrono::seconds(30));
  const std::vector<nlohmann::json> entries = JournalSandbox::instance().entries(matches);
  EXPECT_EQ(entries.size(), 1u);
  return entries.empty() ? nlohmann::json::object() : entries[0];
}

Record next_port_verdict(DaemonProcess& d, const std::string& port, const std::string& health,
                         std::vector<Record>* skipped) {
  return next_record_where(
      d,
      [&](const Record& r) {
        return r.event == EventKind::kPortHealth &&
               r.device + "/" + std::to_string(r.port) == port && r.health == health;
      },
      "port_health " + health + " of " + port, skipped);
}

}  // namespace rdma_eventd::test
