// link_quality records (docs/records.md, "link_quality"): one for each change a port's error
// counters showed (core/link_quality), stamped by the caller.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/link_quality.h"
#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

std::string_view link_change_name(LinkQualityChange::Kind k);  // "bad", "clean", ...

// bad, pegged and hidden_down: warning; clean: notice; reset: info.
Severity link_change_severity(LinkQualityChange::Kind k);

// The record of `c` on a port (unstamped: seq, stream, host and time are the stamper's; the
// severity is the change's, set after stamping with link_change_severity()).
Record link_quality_record(std::string_view device, std::string_view node_guid, uint32_t port,
                           const LinkQualityChange& c, const LinkRate& rate,
                           std::vector<std::string> pegged);

}  // namespace rdma_eventd::daemon
