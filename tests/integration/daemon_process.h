// rdma-eventd for the integration tests: the harness's DaemonProcess with its records also in
// the journal sandbox's journald, and printed on its standard output by default.
//
//   SimFabric sim(topology("two-adapters"));
//   DaemonProcess d(sim, R"({"severity": {"gid_change": "warning"}})");
//   inject(sim, {"port", "down", "mlx5_0/1"});
//   Record r = d.next_record();           // from --print-records on its stdout
//   auto entries = d.journal_entries(1);  // the same record, read back from journald
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eventd_process.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::test {

using namespace std::chrono_literals;

struct DaemonOptions {
  std::string config_json = "{}";  // written to a file passed with -c
  std::vector<std::string> extra_args;
  bool wait_ready = true;  // wait for READY=1
  // --print-records: the test must then read the daemon's stdout (next_record), or a storm
  // fills the pipe and the daemon waits for it.
  bool print_records = true;
  std::string socket;  // the subscriber socket; empty: one in the daemon's own directory
  std::map<std::string, std::string> env;  // more environment for the daemon
};

class DaemonProcess : public rdmatest::DaemonProcess {
 public:
  DaemonProcess(const rdmatest::SimFabric& sim, const DaemonOptions& options = {});
  DaemonProcess(const rdmatest::SimFabric& sim, const std::string& config_json)
      : DaemonProcess(sim, DaemonOptions{config_json}) {}

  // The next record the daemon printed (--print-records), failing the wait after `timeout`.
  Record next_record(rdmatest::Duration timeout = 20s);

  // The journal entries of this daemon's records (RDMA_STREAM=stream), once there are at least
  // `count` of them.
  std::vector<nlohmann::json> journal_entries(size_t count, rdmatest::Duration timeout = 30s);
};

// Reads records until one that `want` accepts (at most 200); the others are kept in *skipped.
// A failure, and an empty record, when none comes.
template <typename Want>
Record next_record_where(DaemonProcess& d, Want want, const std::string& what,
                         std::vector<Record>* skipped = nullptr) {
  for (int i = 0; i < 200; ++i) {
    Record r = d.next_record();
    if (want(r)) return r;
    if (skipped) skipped->push_back(std::move(r));
  }
  ADD_FAILURE() << "no " << what << " in 200 records";
  return {};
}

// The next port_health record of `port` ("mlx5_0/1") with the verdict `health`.
Record next_port_verdict(DaemonProcess& d, const std::string& port, const std::string& health,
                         std::vector<Record>* skipped = nullptr);

// Fails the test once for each of `records`, none of which should have come `when` ("before the
// quiet period ended"), naming each.
void expect_no_records(const std::vector<Record>& records, const std::string& when);

// The journal entry of one of the daemon's records, found by its seq in the daemon's stream
// (waited for up to 30 s); a failure when there is not exactly one.
nlohmann::json journal_entry_of(DaemonProcess& d, const Record& r);

}  // namespace rdma_eventd::test
