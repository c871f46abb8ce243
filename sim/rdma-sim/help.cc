// rdma-sim --help and rdma-sim help COMMAND.
#include <cstdio>
#include <cstring>

#include "cli.h"

namespace rdmasim::cli {
namespace {

struct Help {
  const char* name;
  const char* usage;
  const char* text;
};

const Help kHelp[] = {
    {"start",
     "rdma-sim start [-t TOPOLOGY.json] [--dir DIR] [--query-latency-us N] [--no-rdma] "
     "[--udev] [--rdma-netlink monitor|rename-less|none] [--foreground]",
     "Start a simulated fabric in DIR from a topology file (no -t: an empty fabric).\n"
     "Without --foreground, returns once the fabric is ready and prints DIR.\n"
     "With --foreground, stays attached, prints \"ready DIR\" once ready and exits 0 on\n"
     "SIGTERM, SIGINT or `rdma-sim stop`. A malformed topology exits 78 with the file,\n"
     "the field path and the value; a simulator already running in DIR exits 1.\n"
     "--udev: broadcast udev netlink messages for every device added, removed or renamed,\n"
     "as systemd-udevd would. Needs root, and a network namespace of its own (unshare --net):\n"
     "every udev client in the namespace receives them.\n"
     "--rdma-netlink: the kernel DIR/rdma-netlink.sock stands for: monitor (6.13 on, the\n"
     "default: SYS_GET shows MONITOR_MODE, REGISTER/NETDEV_ATTACH/UNREGISTER/RENAME are sent),\n"
     "rename-less (6.12: no RENAME) or none (6.1: no MONITOR_MODE, no notification)."},
    {"stop", "rdma-sim stop", "Stop the simulator; returns once it has exited and cleaned DIR up."},
    {"run", "rdma-sim run -- CMD [ARGS...]",
     "Run CMD with LD_LIBRARY_PATH starting with the stand-in libibverbs.so.1 and RDMA_SIM_DIR\n"
     "set, so that any program linked against libibverbs sees the simulated fabric, and\n"
     "RDMA_EVENTD_DEVLINK_SOCKET=DIR/devlink.sock, the stand-in for the kernel's devlink, and\n"
     "RDMA_EVENTD_RDMA_NETLINK_SOCKET=DIR/rdma-netlink.sock, the one for its NETLINK_RDMA."},
    {"env", "rdma-sim env",
     "Print the `export ...` lines that `run` would apply, for a shell: eval \"$(rdma-sim env)\"."},
    {"show", "rdma-sim show [DEV]",
     "Show devices, ports, GIDs, P_Keys, the counters that are not 0 (a RoCE port's FEC mode\n"
     "and ethtool/ counters too) and the counter files made to fail (and unplugged devices).\n"
     "--json: every counter."},
    {"stats", "rdma-sim stats",
     "Show the accounting: every context (pid, device, open or closed, events queued by the\n"
     "simulator, read by ibv_get_async_event, acked by ibv_ack_async_event), every DEVX channel\n"
     "(subscriptions, records queued, read, merged, dropped by allocation failures) and the\n"
     "totals."},
    {"port down", "rdma-sim port down DEV/PORT [--phys polling|disabled|sleep]",
     "Take a port's link down: state DOWN; phys Polling (InfiniBand) or Disabled (Ethernet)\n"
     "unless --phys says otherwise; an InfiniBand port loses its LID and SM LID (0); its\n"
     "link_downed counters (counters/, and rxe's hw_counters/) count one more. Queues PORT_ERR."},
    {"port up", "rdma-sim port up DEV/PORT [--lid N] [--sm-lid N] [--width W] [--speed S]",
     "Bring a port's link up: state ACTIVE, phys LinkUp; an InfiniBand port gets its LID and\n"
     "SM LID back (the ones it had, or those given). --width (1x, 2x, 4x, 8x, 12x) and\n"
     "--speed (sdr, ddr, qdr, fdr10, fdr, edr, hdr, ndr, xdr): the link retrained at that width\n"
     "or speed, e.g. a 4x link that comes back at 1x (ibv_query_port and sysfs rate show it).\n"
     "Queues PORT_ACTIVE."},
    {"port mtu", "rdma-sim port mtu DEV/PORT MTU",
     "Set a RoCE port's active MTU (256, 512, 1024, 2048 or 4096, at most max_mtu), as a change\n"
     "of its netdev's MTU does. Queues no event: the kernel sends none (rxe, mlx5)."},
    {"lid", "rdma-sim lid DEV/PORT LID", "Change an InfiniBand port's LID. Queues LID_CHANGE."},
    {"sm", "rdma-sim sm DEV/PORT SM_LID [--sl N]",
     "Change an InfiniBand port's SM LID (and SM SL). Queues SM_CHANGE."},
    {"reregister", "rdma-sim reregister DEV/PORT",
     "The SM asks for client reregistration. Queues CLIENT_REREGISTER."},
    {"pkey", "rdma-sim pkey DEV/PORT INDEX VALUE",
     "Set P_Key table entry INDEX of an InfiniBand port (VALUE 0 clears it). Queues PKEY_CHANGE."},
    {"gid add",
     "rdma-sim gid add DEV/PORT GID [--index N] [--type ib|roce-v1|roce-v2] [--netdev NAME]",
     "Add a GID (IPv6 notation) at INDEX or the first free slot. The type defaults to ib on an\n"
     "InfiniBand port and roce-v2 on an Ethernet port, whose GIDs default to the port's netdev.\n"
     "Queues one GID_CHANGE."},
    {"gid del", "rdma-sim gid del DEV/PORT INDEX", "Remove GID INDEX. Queues one GID_CHANGE."},
    {"gid add-ip", "rdma-sim gid add-ip DEV/PORT IP --netdev NAME",
     "An IP address appears on a RoCE netdev: adds its RoCE v1 and v2 GIDs (IPv4 as\n"
     "::ffff:a.b.c.d) in the first two free slots. Queues two GID_CHANGE."},
    {"gid del-ip", "rdma-sim gid del-ip DEV/PORT IP",
     "The IP address goes away: removes its GIDs. Queues one GID_CHANGE per GID."},
    {"counter add", "rdma-sim counter add DEV/PORT NAME N",
     "Add N to a port counter of counters/ (the PMA's: symbol_error, link_downed, ...) or\n"
     "hw_counters/ (the driver's). A counters/ counter stops at its width's maximum and never\n"
     "wraps: local_link_integrity_errors at 15, link_downed at 255, symbol_error at 65535.\n"
     "mlx5's hw_counters/ Q counters (out_of_sequence, packet_seq_err, ...) are 32 bits and\n"
     "wrap past 4294967295; other hw_counters/ are 64-bit. NAME may name the group,\n"
     "hw_counters/link_downed, where both have it. No event: the file changes.\n"
     "On a RoCE port NAME may be an ethtool PHY counter of its netdev, 64-bit, read over\n"
     "generic netlink (devlink.sock): ethtool/fec_corrected_blocks,\n"
     "ethtool/fec_uncorrectable_blocks, ethtool/fec_corrected_bits, ethtool/symbol_errors."},
    {"counter set", "rdma-sim counter set DEV/PORT NAME N",
     "Set a port counter to N; refused over its width's maximum, but a counter that wraps\n"
     "(mlx5's Q counters) takes N modulo 2^32. 0 is what a reset by another tool (perfquery\n"
     "-R) looks like to a reader. ethtool/ counters too (a driver reload)."},
    {"counter fail", "rdma-sim counter fail DEV/PORT NAME missing|empty|garbage|unreadable|hang|ok",
     "Make a counter's file fail its readers: missing (no file: ENOENT), empty (0 bytes),\n"
     "garbage (\"N/A (no PMA)\", as older kernels printed), unreadable (open succeeds, read\n"
     "fails: EISDIR here, EINVAL or EIO on a real kernel), hang (a FIFO: open blocks, as a\n"
     "read waits on a firmware that stopped answering; mlx5 fails it after 60 s). ok: the file\n"
     "is back, with the counter's value, which went on counting meanwhile. Readers blocked by\n"
     "hang read that value when it ends (another mode, ok, unplug, stop)."},
    {"counter reset", "rdma-sim counter reset DEV/PORT",
     "Set every counters/ counter of a port to 0, as perfquery -R does (hw_counters/ cannot be\n"
     "reset)."},
    {"fatal", "rdma-sim fatal DEV [--port N]",
     "Firmware fatal error: queues DEVICE_FATAL (element N, default 0). The device stays listed\n"
     "but every query on it fails with EIO (and it cannot be opened) until unplug + replug."},
    {"speed-change", "rdma-sim speed-change DEV",
     "The effective speed of the device's ports changed (a member link of its link aggregation\n"
     "went down or came back): one DEVICE_SPEED_CHANGE (20), element 0, for the whole device,\n"
     "as mlx5's handle_port_change sends it (Linux 7.0). No port attribute changes: the\n"
     "effective speed is not among ibv_query_port's (ibv_query_port_speed, rdma-core 62, reads\n"
     "it) and sysfs rate stays. A link that retrained at another width or speed is\n"
     "'port down' then 'port up --width W --speed S', which do change them."},
    {"unplug", "rdma-sim unplug DEV [--no-disassociate] [--wait SECONDS]",
     "Hot-unplug a device. Default (a driver that disassociates, like mlx5): one DEVICE_FATAL\n"
     "(element 0) per open context, then silence forever; queries fail with EIO (P_Key: ENOENT).\n"
     "--no-disassociate (a driver that cannot): no event; the device leaves the list but\n"
     "stays usable by its open contexts, and its removal is pending until they all close.\n"
     "--wait blocks until the removal completes, or fails (exit 1) after SECONDS."},
    {"replug", "rdma-sim replug DEV",
     "Plug an unplugged device back: its topology definition, a NEW index."},
    {"reload", "rdma-sim reload DEV",
     "mlx5_core is unbound from DEV's PCI function and bound again (modprobe -r and modprobe):\n"
     "the RDMA device is unregistered (disassociated: DEVICE_FATAL to its contexts), its\n"
     "devlink instances go (PORT_DEL, DEVLINK_CMD_DEL) and come back new (DEVLINK_CMD_NEW,\n"
     "PORT_NEW) with fresh, healthy reporters and no health notification, and the RDMA device\n"
     "registers again, same node GUID. mlx5 devices only."},
    {"cycle", "rdma-sim cycle DEV [--count N]",
     "Unplug and plug a device back N times in a row (default 1), like a driver reloading in a\n"
     "loop: every open context gets its DEVICE_FATAL each time; the device ends up plugged in\n"
     "with a new index. With --udev, four udev messages per cycle."},
    {"rename", "rdma-sim rename DEV NEWNAME",
     "Rename a device (same index and uverbsN). Processes that listed it keep the old name."},
    {"event", "rdma-sim event DEV[/PORT] TYPE [--element N] [--context ID]",
     "Queue a raw event of any type (a name or a number, e.g. 20) without changing any state.\n"
     "The element defaults to PORT (0 without one). --context sends it to one context only."},
    {"storm",
     "rdma-sim storm --count N [--targets all|DEV/PORT[,DEV/PORT...]] [--types NAME[,NAME...]]",
     "Queue N raw events as fast as possible, round-robin: event i goes to target i mod T\n"
     "with type (i div T) mod K. Types default to port_err,port_active. Prints the count,\n"
     "the seconds and the rate."},
    {"module plug", "rdma-sim module plug DEV/PORT | DEV --module N",
     "A cable or optical module is plugged in: PORT_MODULE_EVENT (0x16), status plugged, for the\n"
     "port's module (topology \"module\", default port - 1) or module N. mlx5 devices only;\n"
     "every DEVX channel of the device subscribed to 0x16 gets it. No port state changes (use\n"
     "port down/up for the link)."},
    {"module unplug", "rdma-sim module unplug DEV/PORT | DEV --module N",
     "A module is unplugged: PORT_MODULE_EVENT (0x16), status unplugged."},
    {"module disable", "rdma-sim module disable DEV/PORT | DEV --module N",
     "A module is disabled: PORT_MODULE_EVENT (0x16), status disabled."},
    {"module error", "rdma-sim module error DEV/PORT ERROR | DEV ERROR --module N",
     "A module fails: PORT_MODULE_EVENT (0x16), status error, with ERROR: power_budget_exceeded,\n"
     "long_range_for_non_mlnx, bus_stuck, no_eeprom_retry_timeout, enforce_part_number_list,\n"
     "unknown_identifier, high_temperature, bad_cable, pcie_power_slot_exceeded, or 0..15."},
    {"temp-warn", "rdma-sim temp-warn DEV SENSOR[,SENSOR...]",
     "Sensors over their threshold: TEMP_WARN_EVENT (0x17) with the 128-bit bitmap of SENSORs\n"
     "(0..127; sensor n is bit n). mlx5 devices only."},
    {"general-event", "rdma-sim general-event DEV SUBTYPE [--data HEX]",
     "GENERAL_EVENT (0x22) with SUBTYPE: pci_power_change, fw_live_patch,\n"
     "pci_sync_for_fw_update, delay_drop_timeout, or 0..255; --data: up to 28 bytes of event data\n"
     "(EQE bytes 32..59) in hex. mlx5 devices only."},
    {"devx-event", "rdma-sim devx-event DEV TYPE [--subtype N] [--data HEX]",
     "Raise an EQE of any TYPE (a name such as port_change, or 0..255) with SUBTYPE and up to 28\n"
     "bytes of data, with no state change. Types cmd (0x0a) and page_request (0x0b) never\n"
     "reach DEVX, as in the kernel. mlx5 devices only."},
    {"devx-storm",
     "rdma-sim devx-storm --count N [--devices all|DEV[,DEV...]] [--types TYPE[,...]]",
     "Raise N EQEs as fast as possible, round-robin: event i goes to device i mod D with type\n"
     "(i div D) mod K (default port_module_event), its sequence number i in EQE bytes 52..59.\n"
     "Devices default to every live mlx5 device with DEVX. Prints the count, the seconds and the\n"
     "rate. At most 10,000,000 events."},
    {"devx-destroy", "rdma-sim devx-destroy DEV [--channel ID]",
     "Destroy DEVX channel ID (see stats), or every open channel of DEV, as the kernel does on\n"
     "disassociation: pending events freed, subscriptions gone, readers see EAGAIN (EIO when\n"
     "blocking) and poll reports IN|RDHUP. The device and its contexts go on, with no event."},
    {"alloc-fail", "rdma-sim alloc-fail DEV [--channel ID] [--count N]",
     "The kernel fails to allocate the next N events (default 1) queued on DEVX channel ID (see\n"
     "stats), or on every channel of DEV that keeps event data: each is dropped, and the\n"
     "channel's next read returns EOVERFLOW once, ahead of the events still queued.\n"
     "OMIT_EV_DATA channels allocate nothing and cannot fail."},
    {"devlink show", "rdma-sim devlink show [DEV|HANDLE [--port N]]",
     "List the devlink instances of the stand-in kernel (DIR/devlink.sock), their ports and\n"
     "netdevs, then their health reporters: handle, port index, reporter, state, error and\n"
     "recovery counts, and the RDMA device the instance belongs to. An mlx5 device's instance\n"
     "is pci/<its PCI function>, with fw and fw_fatal (and vnic from kernel 6.5). A one-port\n"
     "Ethernet function's uplink devlink port (vhca_id << 16) | 0xffff, with tx and rx, is on\n"
     "it before kernel 6.2 and on auxiliary/mlx5_core.eth.<N> from 6.2 (the topology's\n"
     "\"kernel\"). --port N: only the reporters of devlink port N.\n"
     "Every command below that names a REPORTER takes --port N for a port reporter (the\n"
     "DEV/PORT_INDEX of devlink(8)); without it, the instance's own reporter of that name,\n"
     "else its one port reporter of that name."},
    {"devlink ports", "rdma-sim devlink ports [DEV|HANDLE]",
     "List the devlink ports as `devlink port show` does (DEVLINK_CMD_PORT_GET's dump):\n"
     "HANDLE/INDEX, type, netdev and its ifindex, flavour and port number, and the RDMA\n"
     "device."},
    {"devlink report",
     "rdma-sim devlink report DEV|HANDLE REPORTER [--port N] [--recovery ok|fail]",
     "The driver reports an error, as devlink_health_report() in Linux 6.1: the error is\n"
     "counted, the reporter is in error and a notification goes out. With auto recover on, and\n"
     "neither in error already nor within the grace period of its last recovery, it recovers at\n"
     "once (counted, healthy, a second notification); --recovery fail: the driver's recovery\n"
     "fails, it stays in error and nothing more is sent. In error already or within the grace\n"
     "period: no recovery (ECANCELED). Auto recover off: it stays in error.\n"
     "An mlx5 device's fw_fatal is mlx5's: the device enters the error state first\n"
     "(DEVICE_FATAL, element 1), its recovery unregisters and registers the RDMA device again\n"
     "before the healthy notification (pci/ and its reporters stay), and an aborted recovery\n"
     "(ECANCELED) unloads it: the device goes, pci/ stays, fw_fatal in error."},
    {"devlink recover",
     "rdma-sim devlink recover DEV|HANDLE REPORTER [--port N] [--recovery ok|fail]",
     "Recover a reporter, as `devlink health recover` does: a reporter in error recovers\n"
     "(counted, healthy, a notification); a healthy one: nothing. --recovery fail: exit 1, it\n"
     "stays in error. A reporter without a recover operation (mlx5's fw) is refused."},
    {"devlink set",
     "rdma-sim devlink set DEV|HANDLE REPORTER [--port N] [--grace-period MS] "
     "[--auto-recover on|off] [--auto-dump on|off]",
     "Change a reporter's settings, as `devlink health set` does. No notification."},
    {"devlink dump-clear", "rdma-sim devlink dump-clear DEV|HANDLE REPORTER [--port N]",
     "Drop the dump taken at a report (its DUMP_TS attributes go), as `devlink health dump\n"
     "clear` does; the next report takes a new one."},
    {"devlink add",
     "rdma-sim devlink add HANDLE REPORTER [--port N] [--no-recover] [--no-dump] "
     "[--grace-period MS]",
     "A driver creates a reporter on a devlink instance with no RDMA device (e.g.\n"
     "netdevsim/netdevsim9; the instance is made if needed), or with --port N a port\n"
     "reporter on devlink port N of any instance, a device's too (its messages carry\n"
     "DEVLINK_ATTR_PORT_INDEX N; the dump lists it after every instance's own reporters).\n"
     "No notification, as in the kernel."},
    {"devlink remove", "rdma-sim devlink remove HANDLE REPORTER [--port N]",
     "A driver destroys a reporter of an instance with no RDMA device, or a port reporter\n"
     "(--port N) of any instance. No notification. A device's own reporters go with it when\n"
     "it is unplugged."},
    {"devlink close", "rdma-sim devlink close",
     "End every connection to DIR/devlink.sock, as if the kernel side went away: each reader\n"
     "sees its stream end. New connections are still accepted."},
    {"rdma-netlink close", "rdma-sim rdma-netlink close",
     "End every connection to DIR/rdma-netlink.sock, as if the kernel side went away: each\n"
     "reader sees its stream end. New connections are still accepted."},
    {"no-rdma", "rdma-sim no-rdma on|off",
     "\"No RDMA in the kernel\": ibv_get_device_list returns NULL with ENOSYS."},
    {"set", "rdma-sim set query-latency-us N",
     "Model a firmware command latency of N us for port, device, GID and P_Key queries."},
};

}  // namespace

std::string command_usage(const std::string& command) {
  for (const Help& h : kHelp)
    if (command == h.name) return h.usage;
  return "rdma-sim --help";
}

bool print_command_help(const std::string& command, FILE* out) {
  for (const Help& h : kHelp)
    if (command == h.name) {
      std::fprintf(out, "usage: %s\n\n%s\n", h.usage, h.text);
      return true;
    }
  return false;
}

void print_usage(FILE* out) {
  std::fprintf(out,
               "rdma-sim: a simulated RDMA fabric for programs that use libibverbs.\n\n"
               "usage: rdma-sim [--json] [--dir DIR] COMMAND [ARGS...]\n\n"
               "Commands:\n");
  for (const Help& h : kHelp)
    std::fprintf(out, "  %s\n", std::strchr(h.usage, ' ') + 1);
  std::fprintf(
      out,
      "  help [COMMAND]\n\n"
      "Ports are DEV/PORT (mlx5_0/1). Event type names: port_active, port_err, lid_change,\n"
      "pkey_change, sm_change, client_reregister, gid_change, device_fatal,\n"
      "device_speed_change, or a number.\n"
      "DEVX event types (devx-event, devx-storm) are the kernel's EQE names: port_change,\n"
      "port_module_event, temp_warn_event, general_event, ..., or a number.\n"
      "--json prints one JSON object. --dir defaults to $RDMA_SIM_DIR, then /run/rdma-sim\n"
      "(root) or ${XDG_RUNTIME_DIR:-/tmp}/rdma-sim-$UID. A command returns once the change is\n"
      "applied and its events are queued to every open context. Exit status: 0 done, 1\n"
      "refused (the reason on stderr; the fabric is unchanged), 2 bad command line, 69 no\n"
      "simulator running, 78 malformed topology.\n");
}

}  // namespace rdmasim::cli
