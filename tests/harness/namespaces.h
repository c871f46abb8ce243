// Namespaces for tests whose traffic must not reach the host: udev netlink messages from
// `rdma-sim --udev` go to every udev client in the network namespace, and libudev decides
// whether udev runs from a file under /run. Each call affects the test process and every
// process it starts afterwards. Needs root.
#pragma once

namespace rdmatest {

// A network namespace of the test process's own (entered once; later calls do nothing).
void enter_private_network();

// A mount namespace of its own (mounts made afterwards are private) with a tmpfs on /run
// (once; later calls do nothing).
void make_run_private();

// Whether udev runs, as libudev and the daemon judge it: /run/udev/control exists. Refuses
// (HarnessError) before make_run_private().
void set_udev_running(bool running);

}  // namespace rdmatest
