// What the unit tests of the daemon's state files share (health_state_file_test.cc,
// link_quality_state_test.cc): a sample file written and read as the daemon does, and why the
// daemon rejects a file.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/clock.h"
#include "core/state_document.h"

namespace rdma_eventd::daemon {

// Why the daemon rejected a state file; "(accepted)" when it read the file's states.
template <typename States>
std::string why_rejected(const std::variant<States, StateRejected>& r) {
  return std::holds_alternative<StateRejected>(r) ? std::get<StateRejected>(r).reason
                                                  : "(accepted)";
}

// A state file of devices' `Port` states: the daemon's format of it (its writer and reader),
// the boot the tests write it on, when they save it and when they read it, and the states they
// write.
template <typename Port>
struct StateFile {
  using States = std::vector<DeviceState<Port>>;
  using Result = std::variant<States, StateRejected>;

  const state_document::Format<Port>& format;
  std::string_view boot;
  Instant saved;
  Instant now;
  States sample;

  std::string write(const States& states, std::string_view boot_id, Instant saved_at) const {
    return format.to_json(states, boot_id, saved_at);
  }
  Result read(std::string_view text, std::string_view boot_id, Instant at) const {
    return format.from_json(text, boot_id, at);
  }

  // The sample as the daemon writes it.
  std::string written() const { return write(sample, boot, saved); }

  // Why the daemon, now, rejects `text`.
  std::string rejection_of(const std::string& text) const {
    return why_rejected(read(text, boot, now));
  }

  // Why it rejects the sample with one change made to its JSON.
  std::string rejection_of_edit(void (*edit)(nlohmann::json&)) const {
    nlohmann::json doc = nlohmann::json::parse(written());
    edit(doc);
    return rejection_of(doc.dump());
  }

  // The sample written on another boot is rejected: the state of ports does not survive a
  // reboot.
  void expect_another_boots_rejected() const {
    EXPECT_EQ(rejection_of(write(sample, "another-boot", saved)),
              "from another boot (boot id another-boot, this boot is " + std::string(boot) +
                  "): the state of ports does not survive a reboot");
  }

  // What is written of the sample is read back whole.
  void expect_sample_read_back_whole() const {
    const Result r = read(written(), boot, now);
    ASSERT_TRUE(std::holds_alternative<States>(r)) << why_rejected(r);
    EXPECT_EQ(std::get<States>(r), sample);
  }
};

}  // namespace rdma_eventd::daemon
