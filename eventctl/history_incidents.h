// rdma-eventctl history --incidents and --html: the command line over the fleet analysis's
// incident report (fleet/incident_report.h).
#pragma once

#include <string>

#include "cli.h"
#include "incident_report.h"
#include "journal_query.h"
#include "journal_reader.h"

namespace rdma_eventctl {

struct IncidentsRequest {
  rdma_eventd_fleet::IncidentOptions grouping;
  bool print = false;  // --incidents: print them (text, or --json)
  bool json = false;
  std::string html;  // --html FILE: write the timeline page there
};

// Reads the journal `query` names and does what `request` asks; returns the exit code.
int run_history_incidents(const Global& g, rdma_eventd_fleet::JournalQuery query,
                          const IncidentsRequest& request);

// Names a journal file that cannot be read on stderr ("rdma-eventctl: PATH: cannot open: Bad
// message (...); left out").
void report_unreadable(const Global& g, const rdma_eventd_fleet::FileProblem& p);
// The exit code for what a reader left out: 0 when nothing, else kExitIncomplete (74), after
// a last line that says how much.
int incomplete(const Global& g, const rdma_eventd_fleet::JournalReader::Report& report);

}  // namespace rdma_eventctl
