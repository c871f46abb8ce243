// A record's common keys (schema ... port) and its port block, rendered fast: a storm's records
// repeat the same few ports' same keys thousands of times, so their texts are cached per thread
// (record_common.cc). Private to lib/src.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "rdma_eventd/record.h"

namespace rdma_eventd {

// The keys every record and snapshot record begins with, up to "port" and its value.
struct CommonKeys {
  uint64_t seq;
  const std::string& stream;
  int64_t time_us;
  const std::string& host;
  std::string_view event;
  int event_type;
  Severity severity;
  const std::string& device;
  const std::string& node_guid;
  uint32_t port;
};

// Appends "{", the common keys of `k` and then `rendered`: keys rendered already, each with its
// leading comma ("" for none), in one piece.
void append_common_keys(std::string& out, const CommonKeys& k,
                        std::initializer_list<std::string_view> rendered = {});

// The port block's text, each key with its leading comma (",\"link_layer\":...,\"rate_gbps\":N"),
// from this thread's cache: valid until its next call.
const std::string& port_block_text(const PortInfo& p);

}  // namespace rdma_eventd
