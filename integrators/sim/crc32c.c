/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crc32c.c — CRC-32C (Castagnoli), table-driven, eight bytes per step
 * ("slicing by 8"); see crc32c.h. Portable C: the same result on every
 * machine, whatever its byte order, since the input is read byte by byte.
 */
#include "crc32c.h"

#include <pthread.h>

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
    for (uint32_t b = 0; b < 256; ++b) {
        uint32_t c = b;
        for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
        for (int s = 1; s < 8; ++s) table[s][b] = (table[s - 1][b] >> 8) ^ table[0][table[s - 1][b] & 0xFF];
}

uint32_t gp_crc32c(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&table_once, make_table);
    const unsigned char *p = data;
    uint32_t c = ~crc;
    while (len >= 8) {
        c ^= (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        c = table[7][c & 0xFF] ^ table[6][(c >> 8) & 0xFF] ^ table[5][(c >> 16) & 0xFF] ^ table[4][c >> 24]
          ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
    return ~c;
}
