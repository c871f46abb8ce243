// The rdma-eventctl commands. Each parses its own options (argv[0] is the command name) and
// returns the process's exit code.
#pragma once

#include "cli.h"

namespace rdma_eventctl {

int run_monitor(const Global& g, int argc, char** argv);
int run_status(const Global& g, int argc, char** argv);
int run_wait(const Global& g, int argc, char** argv);
int run_report(const Global& g, int argc, char** argv);
int run_health(const Global& g, int argc, char** argv);
int run_history(const Global& g, int argc, char** argv);
int run_metrics(const Global& g, int argc, char** argv);
int run_inventory(const Global& g, int argc, char** argv);

extern const char* const kMonitorHelp;
extern const char* const kStatusHelp;
extern const char* const kWaitHelp;
extern const char* const kReportHelp;
extern const char* const kHealthHelp;
extern const char* const kHistoryHelp;
extern const char* const kMetricsHelp;
extern const char* const kInventoryHelp;

// The monitor's filter options (-e, -d, -p, -s), which history takes too.
std::vector<OptionSpec> filter_options(rdma_eventd::Filter& f);

}  // namespace rdma_eventctl
