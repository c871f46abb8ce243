// What the unit tests of the configuration file share (config_test.cc, health_config_test.cc,
// link_health_config_test.cc): a text parsed as the file "test.json", and the error it gives.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>

#include "config/config.h"

namespace rdma_eventd::daemon {

// The configuration `text` gives; a failure (and the defaults) when it gives an error.
inline Config config_of(std::string_view text) {
  ConfigResult r = parse_config(text, "test.json");
  if (auto* e = std::get_if<ConfigError>(&r)) ADD_FAILURE() << e->message();
  return std::holds_alternative<Config>(r) ? std::get<Config>(r) : Config{};
}

// The error `text` gives; a failure (and an empty error) when it parses.
inline ConfigError config_error(std::string_view text) {
  ConfigResult r = parse_config(text, "test.json");
  EXPECT_TRUE(std::holds_alternative<ConfigError>(r)) << text;
  return std::holds_alternative<ConfigError>(r) ? std::get<ConfigError>(r) : ConfigError{};
}

// The one line the daemon prints for that error ("test.json: KEY: REASON"); "" when it parses.
inline std::string error_of(std::string_view text) {
  const ConfigError e = config_error(text);
  return e.file.empty() ? "" : e.message();
}

}  // namespace rdma_eventd::daemon
