// udev_listen: prints every udev event of the infiniband and infiniband_verbs subsystems that
// libudev hands to a monitor of the "udev" group, one line each:
//   ACTION SUBSYSTEM SYSNAME seq=N devpath=... [devpath_old=...] [name=...] [devname=...]
// It prints "listening" once the monitor is bound. The simulator's fidelity test runs it to
// check that the real libudev accepts the simulator's messages.
#include <libudev.h>
#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main() {
  udev* u = udev_new();
  udev_monitor* m = u ? udev_monitor_new_from_netlink(u, "udev") : nullptr;
  if (!m) {
    std::fprintf(stderr, "udev_listen: cannot create a monitor: %s\n", std::strerror(errno));
    return 1;
  }
  udev_monitor_filter_add_match_subsystem_devtype(m, "infiniband", nullptr);
  udev_monitor_filter_add_match_subsystem_devtype(m, "infiniband_verbs", nullptr);
  if (udev_monitor_enable_receiving(m) < 0) {
    std::fprintf(stderr, "udev_listen: cannot start receiving\n");
    return 1;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("listening\n");
  pollfd p{udev_monitor_get_fd(m), POLLIN, 0};
  for (;;) {
    if (poll(&p, 1, -1) < 0 && errno != EINTR) return 1;
    udev_device* d = udev_monitor_receive_device(m);
    if (!d) continue;
    auto prop = [d](const char* key) {
      const char* v = udev_device_get_property_value(d, key);
      return v ? v : "";
    };
    std::printf("%s %s %s seq=%llu devpath=%s", udev_device_get_action(d),
                udev_device_get_subsystem(d), udev_device_get_sysname(d),
                static_cast<unsigned long long>(udev_device_get_seqnum(d)),
                udev_device_get_devpath(d));
    if (*prop("DEVPATH_OLD")) std::printf(" devpath_old=%s", prop("DEVPATH_OLD"));
    if (*prop("NAME")) std::printf(" name=%s", prop("NAME"));
    if (const char* node = udev_device_get_devnode(d)) std::printf(" devname=%s", node);
    std::printf("\n");
    udev_device_unref(d);
  }
}
