/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crc32c.h — CRC-32C (Castagnoli), the checksum of checkpoint files.
 *
 * The standard algorithm of iSCSI (RFC 3720, appendix B.4), ext4 and
 * Btrfs: reflected polynomial 0x82F63B78, initial value and final XOR
 * 0xFFFFFFFF; the check value of "123456789" is 0xE3069283. It detects
 * every burst of up to 32 flipped bits and any other damage with
 * probability 1 - 2^-32. Not a defence against deliberate forgery.
 */
#ifndef GP_CRC32C_H
#define GP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0, feed the bytes in any number of
 * pieces, each call returning the CRC of everything fed so far. */
uint32_t gp_crc32c(uint32_t crc, const void *data, size_t len);

#endif /* GP_CRC32C_H */
