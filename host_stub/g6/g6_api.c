/* SPDX-License-Identifier: Apache-2.0 */
/* g6_api.c — the exported g6 calls of g6.h over one g6_engine. */
#include "g6.h"

#include <stdio.h>
#include <string.h>

#include "g6_config.h"
#include "g6_engine.h"
#include "g6_jmem.h"
#include "g6_lists.h"

static struct {
    int open;
    g6_config cfg;
    g6_engine eng;
    g6_jmem jm;
    g6_lists lists;
    double ti;
} g6;

static int report(const char *call, const char *sentence)
{
    fprintf(stderr, "gravplug-g6: %s: %s\n", call, sentence);
    return -1;
}

static int need_open(const char *call)
{
    return g6.open ? 0 : report(call, "g6_open has not been called (or g6_close was)");
}

static int open_device(const char *call, int device)
{
    if (g6.open) return 0;
    char err[1024];
    if (g6_config_read(&g6.cfg, err, sizeof err)) return report(call, err);
    if (g6_engine_open(&g6.eng, &g6.cfg, device)) return report(call, g6.eng.err);
    g6.open = 1;
    g6.ti = 0.0;
    return 0;
}

int g6_open_(int *id) { return open_device("g6_open", id && *id >= 0 ? *id : -1); }

int g6_open_special(int ndev, int *list)
{
    return open_device("g6_open_special", ndev > 0 && list && list[0] >= 0 ? list[0] : -1);
}

int g6_close_(int *id)
{
    if (!g6.open) return 0;
    g6_engine_close(&g6.eng);
    g6_jmem_free(&g6.jm);
    g6_lists_free(&g6.lists);
    g6.open = 0;
    return 0;
}

int g6_npipes_(void)
{
    if (g6.open) return g6.cfg.npipes;
    g6_config c;
    char err[1024];
    if (g6_config_read(&c, err, sizeof err)) {
        report("g6_npipes", err);
        return 1;
    }
    return c.npipes;
}

int g6_set_tunit_(double *t) { return 0; }
int g6_set_xunit_(double *x) { return 0; }

int g6_set_ti_(int *id, double *ti)
{
    if (need_open("g6_set_ti")) return -1;
    if (!ti) return report("g6_set_ti", "ti is NULL");
    g6.ti = *ti;
    return 0;
}

int g6_set_j_particle_(int *cluster_id, int *address, int *index, double *tj, double *dtj, double *mass,
                       double k18[3], double j6[3], double a2[3], double v[3], double x[3])
{
    if (need_open("g6_set_j_particle")) return -1;
    if (!address || !index || !tj || !mass || !j6 || !a2 || !v || !x)
        return report("g6_set_j_particle", "an argument is NULL");
    if (*address < 0 || *address >= (1 << 30)) {
        char s[128];
        snprintf(s, sizeof s, "address %d is outside the j-memory [0, 2^30)", *address);
        return report("g6_set_j_particle", s);
    }
    if (!(*mass >= 0)) {
        char s[128];
        snprintf(s, sizeof s, "address %d: the mass %g is negative or NaN", *address, *mass);
        return report("g6_set_j_particle", s);
    }
    if (g6_jmem_set(&g6.jm, (uint32_t)*address, *index, *tj, *mass, j6, a2, v, x))
        return report("g6_set_j_particle", "no memory to grow the j-memory");
    return 0;
}

static int check_call(const char *call, const int *nj, const int *ni, const int *index, double (*xi)[3],
                      double (*vi)[3], const double *eps2)
{
    if (need_open(call)) return -1;
    if (!nj || !ni || !eps2) return report(call, "nj, ni or eps2 is NULL");
    if (*nj < 0 || *ni < 0 || *ni > g6.cfg.npipes) {
        char s[160];
        snprintf(s, sizeof s, "nj = %d, ni = %d: both must be >= 0 and ni <= g6_npipes() = %d", *nj, *ni,
                 g6.cfg.npipes);
        return report(call, s);
    }
    if (*ni > 0 && (!index || !xi || !vi)) return report(call, "index, xi or vi is NULL");
    return 0;
}

/* The force pass is run by the last half, from its own arguments, so a
 * first half alone (ph4's sync_gpu) costs nothing. */
void g6calc_firsthalf_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3], double vi[][3],
                       double aold[][3], double j6old[][3], double phiold[], double *eps2, double h2[])
{
    check_call("g6calc_firsthalf", nj, ni, index, xi, vi, eps2);
}

static int lasthalf(const char *call, int *nj, int *ni, int index[], double xi[][3], double vi[][3],
                    double *eps2, double h2[], double acc[][3], double jerk[][3], double pot[], int inn[])
{
    if (check_call(call, nj, ni, index, xi, vi, eps2)) return -1;
    if (*ni > 0 && (!acc || !jerk || !pot)) return report(call, "acc, jerk or pot is NULL");
    if (g6_engine_calc(&g6.eng, &g6.jm, g6.ti, (size_t)*nj, (size_t)*ni, index, &xi[0][0], &vi[0][0], *eps2,
                       h2, *ni ? &acc[0][0] : NULL, *ni ? &jerk[0][0] : NULL, pot, inn, &g6.lists))
        return report(call, g6.eng.err);
    return 0;
}

int g6calc_lasthalf_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3], double vi[][3],
                     double *eps2, double h2[], double acc[][3], double jerk[][3], double pot[])
{
    return lasthalf("g6calc_lasthalf", nj, ni, index, xi, vi, eps2, h2, acc, jerk, pot, NULL);
}

int g6calc_lasthalf2_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3], double vi[][3],
                      double *eps2, double h2[], double acc[][3], double jerk[][3], double pot[], int inn[])
{
    return lasthalf("g6calc_lasthalf2", nj, ni, index, xi, vi, eps2, h2, acc, jerk, pot, inn);
}

int g6_initialize_jp_buffer_(int *cluster_id, int *buf_size) { return need_open("g6_initialize_jp_buffer"); }
int g6_flush_jp_buffer_(int *cluster_id) { return need_open("g6_flush_jp_buffer"); }
int g6_reset_fofpga_(int *cluster_id) { return need_open("g6_reset_fofpga"); }

int g6_reset_(int *cluster_id)
{
    if (need_open("g6_reset")) return -1;
    g6_jmem_reset(&g6.jm);
    g6.lists.valid = 0;
    g6.eng.jcap = 0; /* the next call reloads the plugin: old addresses leave */
    return 0;
}

int g6_read_neighbour_list_(int *cluster_id)
{
    if (need_open("g6_read_neighbour_list")) return -1;
    if (!g6.lists.valid)
        return report("g6_read_neighbour_list", "no lists: the last g6calc failed or had no h2 > 0");
    return g6_lists_longest(&g6.lists) > (size_t)g6.cfg.nbmax ? 1 : 0;
}

int g6_get_neighbour_list_(int *cluster_id, int *ipipe, int *maxlength, int *n_neighbours, int neighbour_list[])
{
    if (need_open("g6_get_neighbour_list")) return -1;
    if (!g6.lists.valid)
        return report("g6_get_neighbour_list", "no lists: the last g6calc failed or had no h2 > 0");
    if (!ipipe || !maxlength || !n_neighbours || *maxlength < 0 || *ipipe < 0 ||
        (size_t)*ipipe >= g6.lists.ni) {
        char s[160];
        snprintf(s, sizeof s, "ipipe %d is not one of the last call's %zu pipes (or an argument is NULL)",
                 ipipe ? *ipipe : -1, g6.lists.ni);
        return report("g6_get_neighbour_list", s);
    }
    size_t n = g6.lists.len[*ipipe], m = n < (size_t)*maxlength ? n : (size_t)*maxlength;
    if (m && !neighbour_list) return report("g6_get_neighbour_list", "neighbour_list is NULL");
    if (m) memcpy(neighbour_list, g6.lists.pool + g6.lists.start[*ipipe], m * sizeof(int));
    *n_neighbours = (int)n;
    return n > (size_t)*maxlength ? 1 : 0;
}

int get_device_count(void) { return 1; }
