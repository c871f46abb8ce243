// The test harness for tests that run real binaries (the simulator, the daemon, rdma-core's
// utilities). Include this header and link rdma_test_harness.
//
//   process.h     Process (spawn with args/env, line-by-line output, waits with deadlines,
//                 signals, exit status), run_command, wait_until
//   temp_dir.h    TempDir (RAII private directory), read_file
//   sim_fabric.h  SimFabric (a private `rdma-sim --foreground`, control commands, stats,
//                 the environment for programs run against it), inject
//   eventd_process.h  DaemonProcess (rdma-eventd on a fabric, ready once it says READY=1)
//   notify_receiver.h NotifyReceiver (the service manager's end of sd_notify)
//   line_client.h LineClient (a raw client of the subscriber socket), reply_to
//   paths.h       where the built programs, the stand-in library and the sources are
//   namespaces.h  a private network namespace, a private /run, "udev is running"
//   proc_info.h   a process's descriptors, memory and wakeups, from /proc
#pragma once

#include "eventd_process.h"
#include "line_client.h"
#include "namespaces.h"
#include "notify_receiver.h"
#include "paths.h"
#include "proc_info.h"
#include "process.h"
#include "sim_fabric.h"
#include "temp_dir.h"
