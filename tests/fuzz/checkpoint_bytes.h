/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checkpoint_bytes.h — a checkpoint file as bytes, for the fuzz drivers
 * that edit one (tests/fuzz/fuzz-checkpoint-config.c, fuzz-gravhost-restart.c):
 * the header's field offsets (integrators/sim/checkpoint.c, format 4: 8 magic
 * bytes, 8 uint64, integrator[32], 9 doubles, 2 int64, 7 uint64, then
 * n_particle_saved: the per-particle block's doubles per particle, after
 * t_last; format 3 ended before it, at byte 248) and the
 * resealing a deliberate edit does, and whole files read and written as
 * bytes. Header only.
 */
#ifndef GP_FUZZ_CHECKPOINT_BYTES_H
#define GP_FUZZ_CHECKPOINT_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/crc32c.h"

enum {
    H_VERSION = 8, H_CRC = 16, H_N = 24, H_USER_LEN = 56, H_N_SAVED = 64, H_INTEGRATOR = 72,
    H_SETTINGS = 128, H_COUNTERS = 192, H_N_PARTICLE_SAVED = 248, H_END = 256
};

/* Both CRC-32C checksums recomputed, as an attacker's edit would have
 * them: the header's (with its own field zeroed) and the trailer's. */
static inline void fz_reseal(unsigned char *b, size_t len)
{
    if (len < H_END + 8) return;
    memset(b + H_CRC, 0, 8);
    uint64_t h = gp_crc32c(0, b, H_END);
    memcpy(b + H_CRC, &h, 8);
    uint64_t t = gp_crc32c(0, b, len - 8);
    memcpy(b + len - 8, &t, 8);
}

/* The whole file at path (malloc'd, with a '\0' after its *len bytes, so
 * a text file is a string), or NULL. */
static inline unsigned char *fz_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(sz > 0 ? (size_t)sz + 1 : 1);
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) { free(b); b = NULL; }
    fclose(f);
    if (b) b[sz > 0 ? sz : 0] = '\0';
    *len = (size_t)sz;
    return b;
}

/* 0 when all len bytes went to path. */
static inline int fz_write_file(const char *path, const unsigned char *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = (len == 0 || fwrite(b, 1, len, f) == len);
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

#endif /* GP_FUZZ_CHECKPOINT_BYTES_H */
