// rdma-eventctl history --incidents and --html: the journal's fault records grouped into
// incidents (incidents.h), printed newest first and/or drawn as a timeline page.
#pragma once

#include <string>

#include "cli.h"
#include "incidents.h"
#include "journal_reader.h"

namespace rdma_eventctl {

// sysexits.h EX_CANTCREAT: the --html file cannot be written.
inline constexpr int kExitCantCreate = 73;

struct IncidentsRequest {
  IncidentOptions grouping;
  bool print = false;  // --incidents: print them (text, or --json)
  bool json = false;
  std::string html;  // --html FILE: write the timeline page there
};

// Reads the journal `query` names and does what `request` asks; returns the exit code.
int run_history_incidents(const Global& g, JournalQuery query, const IncidentsRequest& request);

}  // namespace rdma_eventctl
