/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_index_map.h — GRAPE-6 particle index -> j-memory address: the
 * clients name i-particles and neighbours by the index they gave
 * g6_set_j_particle (ph4 passes AMUSE ids), not by address. An open-
 * addressing hash table; an index set again moves to its new address.
 */
#ifndef GP_G6_INDEX_MAP_H
#define GP_G6_INDEX_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct g6_index_map {
    size_t cap, count; /* cap a power of two, or 0 */
    int *key;
    uint32_t *addr;    /* UINT32_MAX: empty slot */
} g6_index_map;

/* 0, or -1 when memory runs out (the map is unchanged then). */
int g6_index_map_put(g6_index_map *m, int index, uint32_t address);
/* Removes index only when it maps to address. */
void g6_index_map_drop(g6_index_map *m, int index, uint32_t address);
/* The address of index, or UINT32_MAX. */
uint32_t g6_index_map_get(const g6_index_map *m, int index);
void g6_index_map_free(g6_index_map *m);

#endif
