// What `rdma-eventctl history --incidents` and `--html` make of a journal's entries: the
// grouping fed, the incidents printed (text newest first, JSON each as it closes) and the
// page's timeline. Pure but for the stream it prints to.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "faults.h"
#include "incident_grouper.h"
#include "incidents_html.h"
#include "journal_query.h"

namespace rdma_eventd_fleet {

// What the grouping needs of an entry: views of its strings, valid while the entry is.
inline FaultInput fault_input(const JournalEntry& e) {
  return {.time_us = e.realtime_us,
          .host = e.hostname,
          .event = e.event,
          .device = e.device,
          .port = port_of(e.port),
          .health = e.health,
          .link_change = e.link_change,
          .stream = e.stream,
          .seq = e.seq};
}

struct IncidentReportOptions {
  IncidentOptions grouping;
  bool print = false;  // --incidents: print them (text, or JSON)
  bool json = false;
  bool page = false;  // --html: draw the timeline
};

class IncidentReport {
 public:
  IncidentReport(const IncidentReportOptions& options, std::FILE* out);

  // The RDMA_EVENT values to read: the faults, and the ups for the page.
  static std::vector<std::string> events(const IncidentReportOptions& options);

  // One journal entry, in journal order.
  void add(const JournalEntry& e);
  // The end of the input: the incidents still open close; the text is printed, newest first.
  // Returns how many incidents there were.
  size_t finish();

  // The page; `notice`: a line at its top (the read was incomplete), empty for none.
  std::string page(std::string_view notice = {}) const { return timeline_.html(notice); }
  // Why some of the page's marks could not be kept (incidents_html.h), empty when none.
  const std::string& page_problem() const { return timeline_.problem(); }

 private:
  IncidentReportOptions options_;
  std::FILE* out_;
  Timeline timeline_;
  IncidentGrouper grouper_;
  // Text, newest first: each incident's lines are kept (a dozen at most, with its start), not
  // the incident: a day of a busy fleet has thousands of incidents of hundreds of hosts each.
  std::vector<std::pair<int64_t, std::string>> text_;
  size_t incidents_ = 0;
};

}  // namespace rdma_eventd_fleet
