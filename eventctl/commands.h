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

extern const char* const kMonitorHelp;
extern const char* const kStatusHelp;
extern const char* const kWaitHelp;
extern const char* const kReportHelp;
extern const char* const kHealthHelp;

}  // namespace rdma_eventctl
