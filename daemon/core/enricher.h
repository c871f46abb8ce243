// Enrichment: a batch of raw events of one device → complete records.
//
// The batch is drained first, then each affected port is queried once (its attributes), the
// GID tables once for the whole device if any GID_CHANGE came, and a port's P_Key table once if
// any PKEY_CHANGE came for it. Cost per batch is bounded by the number of ports, not by the
// number of events. Records are built in event order, and the cached view moves forward as
// they are built, so no change is reported twice or lost: a port's attribute change is on its
// first record of the batch, a P_Key table change on its first PKEY_CHANGE record, and GID
// entries are handed out one per GID_CHANGE record in index order (the kernel sends one event
// per entry), any surplus on the port's last GID_CHANGE record. A DEVICE_SPEED_CHANGE names no
// port: its record carries every port's effective speed (ibv_query_port_speed where the library
// has it, else "unknown"), and every port's attributes are read again: a port_state record
// follows for each whose attributes changed. On a port in link aggregation they mostly have not:
// the effective speed the event is about is not among them.
//
// Records come out unstamped: the caller stamps them (RecordStamper) once it knows every
// record it publishes, in order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/decode.h"
#include "core/device_view.h"

namespace rdma_eventd::daemon {

// A query that failed while enriching: the records still go out, with the last known state.
struct QueryFailure {
  enum class What { kPort, kGids, kPkeys } what = What::kPort;
  uint32_t port = 0;
  int error = 0;  // positive errno
};

struct BatchOutcome {
  std::vector<Record> records;  // unstamped, in event order
  std::vector<QueryFailure> failures;
  // Queries made for this batch, for tests and counters.
  uint32_t port_queries = 0;
  uint32_t gid_queries = 0;
  uint32_t pkey_queries = 0;
};

// Fills `view` from scratch (device open). Returns the failures; a failed part keeps defaults.
std::vector<QueryFailure> load_view(DeviceQueries& queries, uint32_t num_ports, DeviceView& view);

// What a DEVICE_FATAL means, which the event alone cannot tell: the device failed and is still
// registered (device_fatal), or it is being removed (device_removed). The caller decides from
// the device list before the records are built (DeviceLifecycle::meaning_of_fatal).
enum class FatalMeaning { kFailure, kRemoval };

// The working memory of enrich_batch, kept by its caller from one batch to the next: its
// vectors keep their capacity, so that a batch allocates nothing once they have grown to the
// device's size (events one at a time, at a modest rate, would otherwise allocate a dozen
// times each). Nothing in it carries over into the next batch's records: each batch starts by
// overwriting what it uses.
class EnrichScratch {
 public:
  EnrichScratch();
  ~EnrichScratch();
  EnrichScratch(EnrichScratch&&) noexcept;
  EnrichScratch& operator=(EnrichScratch&&) noexcept;

  struct Parts;  // enricher.cc's
  Parts& parts() { return *parts_; }

 private:
  std::unique_ptr<Parts> parts_;
};

// `recycled`: the records of an earlier batch, handed back so that the new ones are built in
// them and reuse their strings' buffers (a storm's records would otherwise allocate their
// stream, host and GUID text one by one). Each is reset to a default Record first: nothing of
// an earlier record survives but the capacity of its strings and vectors. `scratch`: see
// EnrichScratch (none: the batch's working memory is its own).
BatchOutcome enrich_batch(DeviceView& view, std::span<const RawEvent> events,
                          DeviceQueries& queries, FatalMeaning fatal = FatalMeaning::kFailure,
                          std::vector<Record> recycled = {}, EnrichScratch* scratch = nullptr);

// Sets every field of `r` to a default Record's, keeping the buffers of its strings and
// vectors (the optional parts are reset).
void reset_record(Record& r);
// reset_record() but for what every record of a batch is given again before it is published,
// the same for most (its device, node GUID, stream and host): what enrich_batch does to each
// recycled record, so that they are compared rather than copied each time.
void reset_record_but_identity(Record& r);

// Records about a whole device (event_type -1, port 0), unstamped.
Record device_record(EventKind kind, const DeviceView& view);
// device_removed, with the last known state of every port.
Record device_removed_record(const DeviceView& view);

}  // namespace rdma_eventd::daemon
