/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base-params.c — unit tests of plugin/base: the parameter table
 * (types, ranges, enums with an integer alternative, round trips), init
 * argument checks, validation sentences, particle storage, stats copy-out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin_base.h"
#include "tap.h"

static const gp_param_info table[] = {
    {"theta", GP_PARAM_DOUBLE, "0.5", "(0,1]", "opening angle"},
    {"G", GP_PARAM_DOUBLE, "1", NULL, "anything finite"},
    {"leaf", GP_PARAM_INT, "16", "[1,64]", "leaf size"},
    {"refit", GP_PARAM_BOOL, "true", NULL, "refit"},
    {"mac", GP_PARAM_ENUM, "bmax", "bh|bmax|multipole|acceleration", "MAC"},
    {"rebuild", GP_PARAM_ENUM, "auto", "auto|always|N", "rebuild policy"},
};
enum { THETA, G, LEAF, REFIT, MAC, REBUILD, NP };

static int logged;
static void log_fn(void *user, int level, const char *msg)
{
    (void)user;
    if (level == GP_LOG_ERROR && msg && msg[0]) ++logged;
}

int main(void)
{
    gp_base b;
    char buf[128];
    plan_lazy();

    memset(&b, 0, sizeof b);
    ok(gp_base_init(&b, "unit", NULL, table, NP) == GP_OK, "init with defaults");
    ok(gp_param_double(&b, THETA) == 0.5 && gp_param_int(&b, LEAF) == 16 && gp_param_bool(&b, REFIT) == 1 &&
       gp_param_enum(&b, MAC) == 1 && gp_param_enum(&b, REBUILD) == 0, "defaults parsed");

    /* doubles: range, round trip with %.17g */
    ok(gp_base_set_param(&b, "theta", "0.1") == GP_OK, "theta = 0.1");
    gp_base_get_param(&b, "theta", buf, sizeof buf);
    ok(strtod(buf, NULL) == 0.1, "0.1 round-trips exactly ('%s')", buf);
    ok(strcmp(buf, "0.1") == 0, "0.1 is printed as 0.1, the shortest form that round-trips ('%s')", buf);
    ok(gp_base_set_param(&b, "theta", "1") == GP_OK, "closed upper bound accepted");
    ok(gp_base_set_param(&b, "theta", "0") == GP_ERR_INVALID_ARGUMENT, "open lower bound rejected");
    ok(strstr(b.error, "(0,1]") != NULL, "the sentence names the range: %s", b.error);
    ok(gp_base_set_param(&b, "theta", "1.0000001") == GP_ERR_INVALID_ARGUMENT, "above the range rejected");
    ok(gp_base_set_param(&b, "theta", "0.3x") == GP_ERR_INVALID_ARGUMENT, "trailing junk rejected");
    ok(gp_base_set_param(&b, "theta", " 0.25 ") == GP_OK && gp_param_double(&b, THETA) == 0.25,
       "surrounding blanks accepted");
    ok(gp_base_set_param(&b, "G", "inf") == GP_ERR_INVALID_ARGUMENT, "inf rejected for a double");
    ok(gp_base_set_param(&b, "G", "-6.674e-11") == GP_OK, "unbounded double accepts negatives");
    ok(gp_base_set_param(&b, "G", "1e-400") == GP_ERR_INVALID_ARGUMENT && strstr(b.error, "underflows") != NULL,
       "1e-400, which strtod reads as 0, is refused: %s", b.error);
    ok(gp_base_set_param(&b, "G", "1e-310") == GP_OK && gp_param_double(&b, G) > 0,
       "a subnormal such as 1e-310 is a value and is kept");

    /* ints */
    ok(gp_base_set_param(&b, "leaf", "64") == GP_OK && gp_param_int(&b, LEAF) == 64, "int at the closed bound");
    ok(gp_base_set_param(&b, "leaf", "65") == GP_ERR_INVALID_ARGUMENT, "int above the range");
    ok(gp_base_set_param(&b, "leaf", "2.5") == GP_ERR_INVALID_ARGUMENT, "non-integer rejected");
    ok(gp_param_int(&b, LEAF) == 64, "rejected values leave the value unchanged");

    /* bools */
    ok(gp_base_set_param(&b, "refit", "no") == GP_OK && gp_param_bool(&b, REFIT) == 0, "bool 'no'");
    gp_base_get_param(&b, "refit", buf, sizeof buf);
    is_string(buf, "false", "bool formats as false");
    ok(gp_base_set_param(&b, "refit", "maybe") == GP_ERR_INVALID_ARGUMENT, "bool 'maybe' rejected");

    /* enums */
    ok(gp_base_set_param(&b, "mac", "multipole") == GP_OK && gp_param_enum(&b, MAC) == 2, "enum word");
    ok(gp_base_set_param(&b, "mac", "BH") == GP_OK && gp_param_enum(&b, MAC) == 0, "enum words are case-insensitive");
    gp_base_get_param(&b, "mac", buf, sizeof buf);
    is_string(buf, "bh", "enum formats as the canonical word");
    ok(gp_base_set_param(&b, "mac", "b") == GP_ERR_INVALID_ARGUMENT, "a prefix is not a word");
    ok(strstr(b.error, "'bmax'") && strstr(b.error, "'acceleration'"), "the sentence lists the words: %s", b.error);
    ok(gp_base_set_param(&b, "mac", "5") == GP_ERR_INVALID_ARGUMENT, "no integer without N");

    /* enum with an integer alternative */
    ok(gp_base_set_param(&b, "rebuild", "10") == GP_OK && gp_param_enum(&b, REBUILD) == 2 &&
       gp_param_int(&b, REBUILD) == 10, "rebuild = 10 -> word N, integer 10");
    gp_base_get_param(&b, "rebuild", buf, sizeof buf);
    is_string(buf, "10", "formats back as 10");
    ok(gp_base_set_param(&b, "rebuild", "always") == GP_OK && gp_param_enum(&b, REBUILD) == 1, "rebuild = always");
    ok(gp_base_set_param(&b, "rebuild", "0") == GP_ERR_INVALID_ARGUMENT, "0 is not a positive integer");
    ok(gp_base_set_param(&b, "rebuild", "-3") == GP_ERR_INVALID_ARGUMENT, "negative rejected");
    ok(strstr(b.error, "a positive integer") != NULL, "the sentence says 'a positive integer': %s", b.error);

    /* names, buffers */
    ok(gp_base_set_param(&b, "thetta", "1") == GP_ERR_UNKNOWN_PARAMETER, "unknown name");
    ok(strstr(b.error, "theta, G, leaf, refit, mac, rebuild") != NULL, "the sentence lists names: %s", b.error);
    ok(gp_base_get_param(&b, "theta", buf, 3) == GP_ERR_INVALID_ARGUMENT, "too small a buffer");

    /* every value round-trips */
    int rt = 1;
    for (int k = 0; k < NP; ++k) {
        char again[128];
        gp_base_get_param(&b, table[k].name, buf, sizeof buf);
        rt &= gp_base_set_param(&b, table[k].name, buf) == GP_OK;
        gp_base_get_param(&b, table[k].name, again, sizeof again);
        rt &= strcmp(buf, again) == 0;
    }
    ok(rt, "get -> set -> get round-trips for every type");

    /* range parsing */
    double lo, hi;
    int lo_o, hi_o;
    ok(gp_range_parse("[0,inf)", &lo, &lo_o, &hi, &hi_o) && lo == 0 && !lo_o && isinf(hi) && hi_o, "[0,inf)");
    ok(gp_range_parse("(-inf, 2.5]", &lo, &lo_o, &hi, &hi_o) && isinf(lo) && lo < 0 && hi == 2.5 && !hi_o, "(-inf, 2.5]");
    ok(!gp_range_parse("0..1", &lo, &lo_o, &hi, &hi_o), "not a range");
    gp_base_free(&b);

    /* init arguments */
    memset(&b, 0, sizeof b);
    gp_init_args a = {sizeof(size_t), NULL, 0, NULL, NULL, -1, NULL};
    ok(gp_base_init(&b, "unit", &a, table, NP) == GP_ERR_ABI_MISMATCH, "small struct_size");
    ok(strlen(gp_base_last_error(NULL)) > 0, "... reported through last_error(NULL): %s", gp_base_last_error(NULL));
    gp_base_free(&b);
    memset(&b, 0, sizeof b);
    gp_param ps[2] = {{"leaf", "8"}, {"mac", "nope"}};
    gp_init_args a2 = {sizeof a2, ps, 2, log_fn, NULL, 3, NULL};
    logged = 0;
    ok(gp_base_init(&b, "unit", &a2, table, NP) == GP_ERR_INVALID_ARGUMENT, "a bad init parameter fails init");
    ok(logged == 1, "the failure went through the log callback");
    ok(strstr(gp_base_last_error(NULL), "nope") != NULL, "last_error(NULL) names it");
    gp_base_free(&b);
    memset(&b, 0, sizeof b);
    ps[1].value = "acceleration";
    ok(gp_base_init(&b, "unit", &a2, table, NP) == GP_OK && gp_param_int(&b, LEAF) == 8 &&
       gp_param_enum(&b, MAC) == 3 && b.device == 3, "init params applied, device kept");
    is_string(gp_base_last_error(NULL), "", "a good init clears last_error(NULL)");

    /* particles */
    double pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, mass[3] = {1, 0, 2};
    uint32_t idx[2] = {2, 0};
    ok(gp_particles_set_active(&b, 2, idx) == GP_ERR_BAD_STATE, "subset before particles");
    ok(gp_particles_set(&b, 3, pos, mass) == GP_OK && b.p.n == 3 && b.p.n_active == 3 && !b.p.active, "set 3");
    ok(gp_particles_set_active(&b, 2, idx) == GP_OK && b.p.n_active == 2 && gp_active_index(&b, 0) == 2, "subset {2,0}");
    double bad[9];
    memcpy(bad, pos, sizeof bad);
    bad[8] = NAN;
    ok(gp_particles_set(&b, 3, bad, mass) == GP_ERR_INVALID_ARGUMENT && b.p.n_active == 2, "NaN rejected, subset kept");
    ok(gp_particles_update(&b, bad) == GP_ERR_INVALID_ARGUMENT && b.p.pos[8] == 0.0, "update with NaN changes nothing");
    ok(gp_particles_set(&b, 2, pos, mass) == GP_OK && b.p.n == 2 && b.p.n_active == 2 && !b.p.active,
       "set_particles with a new n resets the subset");
    ok(gp_check_field(&b, 1, pos, NULL) == GP_ERR_INVALID_ARGUMENT, "field needs acc");

    /* stats */
    b.stats.force_calls = 7;
    b.stats.seconds_walk = 2.5;
    gp_stats out;
    memset(&out, 0xff, sizeof out);
    out.struct_size = offsetof(gp_stats, field_calls);
    ok(gp_base_get_stats(&b, &out) == GP_OK && out.force_calls == 7 && out.field_calls == UINT64_MAX,
       "stats copy-out respects struct_size");
    out.struct_size = sizeof out;
    ok(gp_base_get_stats(&b, &out) == GP_OK && out.seconds_walk == 2.5, "full stats");
    double t0 = gp_wtime(), t1 = gp_wtime();
    ok(t1 >= t0 && t0 > 0, "monotonic timer");
    gp_base_free(&b);
    return done_testing();
}
