#include "devx_eqe.h"

#include <algorithm>

#include "common/devx.h"

namespace rdmasim::devx {

Eqe raw_eqe(uint8_t type, uint8_t subtype, const std::vector<uint8_t>& data) {
  Eqe e;
  e.bytes[1] = type;
  e.bytes[3] = subtype;
  std::copy_n(data.begin(), std::min(data.size(), kEqeDataSize), e.bytes.begin() + kEqeDataOffset);
  return e;
}

Eqe port_change_eqe(uint8_t port, uint8_t subtype) {
  std::vector<uint8_t> data(9, 0);
  data[8] = static_cast<uint8_t>((port & 0xf) << 4);
  return raw_eqe(kEventPortChange, subtype, data);
}

Eqe port_module_eqe(uint8_t module, uint8_t status, uint8_t error_type) {
  std::vector<uint8_t> data(7, 0);
  data[1] = module;
  data[3] = status & 0xf;
  data[6] = error_type & 0xf;
  return raw_eqe(kEventPortModule, 0, data);
}

Eqe temp_warning_eqe(const std::vector<uint8_t>& sensors) {
  std::vector<uint8_t> data(16, 0);
  for (uint8_t s : sensors) {
    // msb word first: sensor 127 is the top bit of byte 0, sensor 0 the low bit of byte 15.
    const unsigned byte = 15 - s / 8;
    data[byte] = static_cast<uint8_t>(data[byte] | 1u << (s % 8));
  }
  return raw_eqe(kEventTempWarn, 0, data);
}

Eqe general_eqe(uint8_t subtype, const std::vector<uint8_t>& data) {
  return raw_eqe(kEventGeneral, subtype, data);
}

void set_storm_sequence(Eqe& eqe, uint64_t sequence) {
  for (int i = 0; i < 8; ++i)
    eqe.bytes[kStormSequenceOffset + i] = static_cast<uint8_t>(sequence >> (56 - 8 * i));
}

}  // namespace rdmasim::devx
