// What a record looks like in the journal: a sentence for a person at 3 a.m. and the
// structured fields that make `journalctl RDMA_DEVICE=mlx5_0 RDMA_EVENT=port_err` the event
// history. Pure: the systemd layer only sends what this builds.
#pragma once

#include <string>
#include <string_view>

#include "rdma_eventd/record.h"

namespace rdma_eventd::daemon {

// The stable MESSAGE_ID of each event kind (also in systemd/rdma-eventd.catalog), as 32 hex
// digits.
std::string_view message_id(EventKind kind);

// A record's entry in the journal's native protocol (core/journal_native.h): MESSAGE,
// PRIORITY, MESSAGE_ID, SYSLOG_IDENTIFIER and the RDMA_* fields, appended to `out`, then
// "RDMA_RECORD=". The record's line (its JSON and a newline, the buffer subscribers are sent)
// completes the entry as it is, appended without a scan, since JSON text holds no raw newline.
void append_journal_entry_head(std::string& out, const Record& r, std::string_view identifier);

}  // namespace rdma_eventd::daemon
