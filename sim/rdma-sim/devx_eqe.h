// The event queue entries (EQEs) mlx5 firmware raises, as the simulator builds them: 64 bytes,
// type at byte 1, subtype at byte 3, data from byte 32 (struct mlx5_eqe in the kernel's
// include/linux/mlx5/device.h). A DEVX channel returns them whole after the subscription's cookie.
// Bytes the layouts below do not name stay zero, including the signature and owner bytes (62,
// 63) that real hardware fills.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmasim::devx {

struct Eqe {
  std::array<uint8_t, 64> bytes{};
  uint8_t type() const { return bytes[1]; }
  uint8_t subtype() const { return bytes[3]; }
};

// Any type with any subtype and up to 28 bytes of data.
Eqe raw_eqe(uint8_t type, uint8_t subtype, const std::vector<uint8_t>& data);
// PORT_CHANGE: struct mlx5_eqe_port_state, the port number in the high nibble of data byte 8.
Eqe port_change_eqe(uint8_t port, uint8_t subtype);
// PORT_MODULE_EVENT: struct mlx5_eqe_port_module: module at data byte 1, status at 3, error type
// at 6 (each status and error type in the low 4 bits).
Eqe port_module_eqe(uint8_t module, uint8_t status, uint8_t error_type);
// TEMP_WARN_EVENT: struct mlx5_eqe_temp_warning, two big-endian 64-bit words: sensor_warning_msb
// (sensors 64..127) then sensor_warning_lsb (sensors 0..63); sensor n is bit n % 64.
Eqe temp_warning_eqe(const std::vector<uint8_t>& sensors);
// GENERAL_EVENT with a subtype and its data.
Eqe general_eqe(uint8_t subtype, const std::vector<uint8_t>& data);

// A storm's events carry their sequence number, big-endian, in data bytes 20..27 (EQE bytes
// 52..59), so a reader can check order and loss; hardware leaves them zero.
inline constexpr size_t kStormSequenceOffset = 52;
void set_storm_sequence(Eqe& eqe, uint64_t sequence);

}  // namespace rdmasim::devx
