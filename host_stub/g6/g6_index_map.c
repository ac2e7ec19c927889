/* SPDX-License-Identifier: Apache-2.0 */
/* g6_index_map.c — see g6_index_map.h. Linear probing, deletion by
 * backward shift, so no tombstones. */
#include "g6_index_map.h"

#include <stdlib.h>

static size_t slot_of(int index, size_t cap)
{
    uint32_t h = (uint32_t)index * 2654435761u;
    return (size_t)(h ^ (h >> 15)) & (cap - 1);
}

static int grow(g6_index_map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    int *key = malloc(cap * sizeof *key);
    uint32_t *addr = malloc(cap * sizeof *addr);
    if (!key || !addr) {
        free(key);
        free(addr);
        return -1;
    }
    for (size_t k = 0; k < cap; ++k) addr[k] = UINT32_MAX;
    for (size_t k = 0; k < m->cap; ++k) {
        if (m->addr[k] == UINT32_MAX) continue;
        size_t s = slot_of(m->key[k], cap);
        while (addr[s] != UINT32_MAX) s = (s + 1) & (cap - 1);
        key[s] = m->key[k];
        addr[s] = m->addr[k];
    }
    free(m->key);
    free(m->addr);
    m->key = key;
    m->addr = addr;
    m->cap = cap;
    return 0;
}

static size_t find(const g6_index_map *m, int index)
{
    size_t s = slot_of(index, m->cap);
    while (m->addr[s] != UINT32_MAX && m->key[s] != index) s = (s + 1) & (m->cap - 1);
    return s;
}

int g6_index_map_put(g6_index_map *m, int index, uint32_t address)
{
    if (2 * (m->count + 1) > m->cap && grow(m)) return -1;
    size_t s = find(m, index);
    if (m->addr[s] == UINT32_MAX) {
        m->key[s] = index;
        ++m->count;
    }
    m->addr[s] = address;
    return 0;
}

void g6_index_map_drop(g6_index_map *m, int index, uint32_t address)
{
    if (!m->cap) return;
    size_t s = find(m, index);
    if (m->addr[s] != address) return;
    m->addr[s] = UINT32_MAX;
    --m->count;
    /* shift back the entries whose probe run passed through s */
    for (size_t k = (s + 1) & (m->cap - 1); m->addr[k] != UINT32_MAX; k = (k + 1) & (m->cap - 1)) {
        size_t home = slot_of(m->key[k], m->cap);
        int between = (s <= k) ? (s < home && home <= k) : (s < home || home <= k);
        if (between) continue;
        m->key[s] = m->key[k];
        m->addr[s] = m->addr[k];
        m->addr[k] = UINT32_MAX;
        s = k;
    }
}

uint32_t g6_index_map_get(const g6_index_map *m, int index)
{
    return m->cap ? m->addr[find(m, index)] : UINT32_MAX;
}

void g6_index_map_free(g6_index_map *m)
{
    free(m->key);
    free(m->addr);
    *m = (g6_index_map){0};
}
