/* CRC32C (Castagnoli), the artifact checksum. */
#ifndef RAMPART_CRC32C_H
#define RAMPART_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over buf; start with crc = 0. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
