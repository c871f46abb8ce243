// The bench program's subcommands. Each measures one thing and appends one JSON line to the
// results file (--results FILE, else stdout); `report` turns those lines into
// docs/benchmarks.md. run.sh runs them in order; docs/benchmarks.md describes each figure.
#pragma once

namespace rdma_eventd::bench {

// argv[0] is the subcommand's name.
int cmd_storm(int argc, char** argv);          // storm.cc: a storm read by subscribers
int cmd_consumers(int argc, char** argv);      // storm.cc: a storm read by other programs
int cmd_latency(int argc, char** argv);        // latency.cc
int cmd_floor(int argc, char** argv);          // floor.cc: the same, with a bare fan-out writer
int cmd_journal_floor(int argc, char** argv);  // journal_floor.cc: bare sends to journald
int cmd_startup(int argc, char** argv);        // lifecycle.cc
int cmd_idle(int argc, char** argv);           // lifecycle.cc
int cmd_counters(int argc, char** argv);       // counters.cc: what link quality costs
int cmd_syscall(int argc, char** argv);        // syscall_cost.cc: one system call's price
int cmd_report(int argc, char** argv);         // report.cc

}  // namespace rdma_eventd::bench
