/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_lists.h — the neighbour lists of the last g6calc call, per pipe, as
 * the clients' particle indices sorted ascending (what
 * g6_get_neighbour_list hands out). Built from the plugin's CSR lists of
 * j-addresses, possibly in several passes (the held-slot route).
 */
#ifndef GP_G6_LISTS_H
#define GP_G6_LISTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct g6_lists {
    size_t ni;        /* pipes of the last call; 0: none */
    int valid;        /* lists were asked for by the last call */
    size_t *start, *len, cap_ni;
    int *pool;
    size_t n_pool, cap_pool;
} g6_lists;

/* Starts a call with ni pipes. 0, or -1 out of memory. */
int g6_lists_begin(g6_lists *l, size_t ni);
/* The list of pipe k: n addresses, given as client indices through index[]. */
int g6_lists_put(g6_lists *l, size_t k, const uint32_t *addr, size_t n, const int *index);
/* Appends n client indices to the list of pipe k (after its put). */
int g6_lists_add(g6_lists *l, size_t k, const int *index, size_t n);
/* Sorts every list; the lists become readable. */
void g6_lists_finish(g6_lists *l);
/* The longest list. */
size_t g6_lists_longest(const g6_lists *l);
void g6_lists_free(g6_lists *l);

#endif
