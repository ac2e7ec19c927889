/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi-loader.c — the host-side loader (abi/gravplug_loader.h): short names
 * and paths, GRAVPLUG_PATH, a sentence for each failure, listing, and two
 * plugins side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dlopen-swap.h"
#include "gravplug.h"
#include "gravplug_loader.h"
#include "tap.h"

static int count_cb(const char *path, const char *name, void *user)
{
    int *found = user;
    if (strcmp(name, "cpu-direct") == 0 && strstr(path, "gravplug-cpu-direct.so")) *found = 1;
    return 0;
}

/* gp_plugin_list_preferred's order, as reported */
typedef struct preferred_seen {
    int n, ordered, tree_before_direct, refused_seen;
    int last, at_tree, at_direct;
    uint64_t refuse;
} preferred_seen;

static int preferred_cb(const char *path, const char *name, uint64_t caps, void *user)
{
    preferred_seen *p = user;
    int pref = gp_plugin_preference(caps);
    if (p->n > 0 && pref > p->last) p->ordered = 0;
    if (caps & p->refuse) p->refused_seen = 1;
    p->last = pref;
    if (strcmp(name, "cpu-tree") == 0 && strstr(path, "gravplug-cpu-tree.so")) p->at_tree = p->n;
    if (strcmp(name, "cpu-direct") == 0 && strstr(path, "gravplug-cpu-direct.so")) p->at_direct = p->n;
    ++p->n;
    return 0;
}

static int stop_cb(const char *path, const char *name, void *user)
{
    (void)path; (void)name;
    ++*(int *)user;
    return 1;
}

int main(void)
{
    char err[2048];
    gp_plugin *a = NULL, *b = NULL;
    /* The fixtures directory: GP_FIXTURES_DIR, else the build tree's. */
    const char *fixtures = getenv("GP_FIXTURES_DIR");
#ifdef GP_TEST_FIXTURES
    if (!fixtures) fixtures = GP_TEST_FIXTURES;
#endif
    plan_lazy();

    unsetenv("GRAVPLUG_PATH");
    ok(gp_plugin_open("cpu-direct", &a, err, sizeof err) == GP_OK && a,
       "open cpu-direct by short name from the build tree");
    if (!a) { diag("%s", err); bail("cannot load cpu-direct"); }
    const gp_api *api = gp_plugin_api(a);
    is_string(api->name, "cpu-direct", "its table names it");
    ok(strstr(gp_plugin_path(a), "/gravplug-cpu-direct.so") != NULL, "gp_plugin_path: %s", gp_plugin_path(a));

    ok(gp_plugin_open(gp_plugin_path(a), &b, err, sizeof err) == GP_OK && b,
       "open the same file again by path (side by side)");
    gp_solver *s1 = NULL, *s2 = NULL;
    double pos[6] = {0, 0, 0, 1, 0, 0}, m[2] = {1, 1}, acc1[6], acc2[6];
    ok(api->init(&s1, NULL) == GP_OK && gp_plugin_api(b)->init(&s2, NULL) == GP_OK,
       "an instance from each handle");
    api->set_particles(s1, 2, pos, m);
    gp_plugin_api(b)->set_particles(s2, 2, pos, m);
    api->compute_forces(s1, acc1, NULL);
    gp_plugin_api(b)->compute_forces(s2, acc2, NULL);
    ok(acc1[0] == 1.0 && acc2[0] == 1.0, "both compute");
    api->finalize(s1);
    gp_plugin_api(b)->finalize(s2);
    gp_plugin_close(b);
    b = NULL;

    /* Failures, each with a sentence. */
    gp_status st = gp_plugin_open("no-such-solver", &b, err, sizeof err);
    ok(st == GP_ERR_INVALID_ARGUMENT && b == NULL && strstr(err, "no-such-solver") &&
       strstr(err, "GRAVPLUG_PATH"), "a missing short name: %s", gp_status_name(st));
    diag("%s", err);
    char sp[4096];
    gp_plugin_search_path(sp, sizeof sp);
    ok(strlen(sp) > 0 && strstr(err, sp) != NULL, "the sentence lists the directories searched (%s)", sp);
    st = gp_plugin_open("/nonexistent/dir/gravplug-x.so", &b, err, sizeof err);
    ok(st == GP_ERR_INVALID_ARGUMENT && strstr(err, "does not exist"), "a missing path: %s", err);
    st = gp_plugin_open("/etc/passwd", &b, err, sizeof err);
    ok(st != GP_OK && err[0], "a non-library file path is refused: %s", err);
    st = gp_plugin_open("bad name!", &b, err, sizeof err);
    ok(st == GP_ERR_INVALID_ARGUMENT && err[0], "an ill-formed short name: %s", err);
    ok(gp_plugin_open(NULL, &b, err, sizeof err) == GP_ERR_INVALID_ARGUMENT && err[0], "NULL name");
    ok(gp_plugin_open("cpu-direct", NULL, err, sizeof err) == GP_ERR_INVALID_ARGUMENT, "NULL out");
    ok(gp_plugin_open("no-such-solver", &b, NULL, 0) == GP_ERR_INVALID_ARGUMENT, "err may be NULL");

    /* dlopen's own message: a text file named like a plugin. */
    char tmpdir[] = "/tmp/gp-loader-XXXXXX";
    if (mkdtemp(tmpdir)) {
        char fake[256];
        snprintf(fake, sizeof fake, "%s/gravplug-fake.so", tmpdir);
        FILE *f = fopen(fake, "w");
        if (f) { fputs("not an ELF file\n", f); fclose(f); }
        setenv("GRAVPLUG_PATH", tmpdir, 1);
        st = gp_plugin_open("fake", &b, err, sizeof err);
        ok(st == GP_ERR_UNSUPPORTED && strstr(err, "cannot load"), "a file dlopen refuses: %s", err);
        remove(fake);
        rmdir(tmpdir);
    } else {
        skip(1, "no temporary directory");
    }

    if (fixtures) {
        char path[1024];
        snprintf(path, sizeof path, "%s/gravplug-noentry.so", fixtures);
        st = gp_plugin_open(path, &b, err, sizeof err);
        ok(st == GP_ERR_ABI_MISMATCH && strstr(err, "not a gravplug plugin"), "no entry symbol: %s", err);
        /* GRAVPLUG_PATH is searched first, ':'-separated, empty entries ignored. */
        char gpath[2048];
        snprintf(gpath, sizeof gpath, "/nonexistent::%s", fixtures);
        setenv("GRAVPLUG_PATH", gpath, 1);
        st = gp_plugin_open("wrongabi", &b, err, sizeof err);
        ok(st == GP_ERR_ABI_MISMATCH && strstr(err, "ABI major version 1"),
           "found through GRAVPLUG_PATH, wrong ABI: %s", err);
        gp_plugin_search_path(sp, sizeof sp);
        ok(strncmp(sp, "/nonexistent:", 13) == 0, "GRAVPLUG_PATH comes first in the search path");
        int found = 0;
        size_t listed = gp_plugin_list(count_cb, &found);
        ok(listed >= 3 && found, "gp_plugin_list reports the fixtures and cpu-direct (%zu files)", listed);
        int calls = 0;
        ok(gp_plugin_list(stop_cb, &calls) == 1 && calls == 1, "gp_plugin_list stops when asked");
        /* a host that names no plugin: the order of their capabilities */
        ok(gp_plugin_preference(GP_CAP_TREE | GP_CAP_GPU) > gp_plugin_preference(GP_CAP_TREE) &&
           gp_plugin_preference(GP_CAP_TREE) > gp_plugin_preference(GP_CAP_EXACT | GP_CAP_GPU) &&
           gp_plugin_preference(GP_CAP_EXACT | GP_CAP_GPU) > gp_plugin_preference(GP_CAP_EXACT),
           "gp_plugin_preference: a GPU tree, a CPU tree, a GPU exact sum, a CPU one");
        preferred_seen all = { 0, 1, 0, 0, 0, -1, -1, 0 };
        size_t np = gp_plugin_list_preferred(0, 0, preferred_cb, &all);
        ok(np == (size_t)all.n && all.ordered && all.at_tree >= 0 && all.at_direct > all.at_tree,
           "gp_plugin_list_preferred: %zu plugins best first, cpu-tree (at %d) before cpu-direct (at %d)",
           np, all.at_tree, all.at_direct);
        preferred_seen trees = { 0, 1, 0, 0, 0, -1, -1, GP_CAP_EXACT };
        gp_plugin_list_preferred(GP_CAP_TREE, GP_CAP_EXACT, preferred_cb, &trees);
        ok(trees.n > 0 && !trees.refused_seen && trees.at_direct < 0 && trees.at_tree >= 0,
           "gp_plugin_list_preferred keeps what is needed and leaves out what is refused (%d)", trees.n);
        unsetenv("GRAVPLUG_PATH");

        /* Loading runs a library's code: a plugin anyone could rewrite, or
         * one in a directory anyone could write, is refused before dlopen
         * (this one would load: it is the 1.0 fixture below). */
        char trust_dir[] = "/tmp/gp-trust-XXXXXX", copy[1200], cmd[2600];
        if (mkdtemp(trust_dir)) {
            snprintf(copy, sizeof copy, "%s/gravplug-abi10.so", trust_dir);
            snprintf(cmd, sizeof cmd, "cp '%s/gravplug-abi10.so' '%s'", fixtures, copy);
            int copied = system(cmd) == 0;
            gp_plugin *t = NULL;
            chmod(copy, 0666);
            st = gp_plugin_open(copy, &t, err, sizeof err);
            ok(copied && st == GP_ERR_INVALID_ARGUMENT && !t && strstr(err, "writable by every user"),
               "a world-writable plugin file is refused: %s", err);
            chmod(copy, 0755);
            chmod(trust_dir, 0777);
            setenv("GRAVPLUG_PATH", trust_dir, 1);
            st = gp_plugin_open("abi10", &t, err, sizeof err);
            ok(st == GP_ERR_INVALID_ARGUMENT && !t && strstr(err, "its directory") && strstr(err, "chmod o-w"),
               "a plugin in a world-writable directory is refused, short name too: %s", err);
            chmod(trust_dir, 0700);
            st = gp_plugin_open("abi10", &t, err, sizeof err);
            ok(st == GP_OK && t, "the same file in a directory only its owner writes loads (%s)",
               st == GP_OK ? "ok" : err);
            gp_plugin_close(t);
            unsetenv("GRAVPLUG_PATH");
            remove(copy);
            rmdir(trust_dir);
        } else {
            skip(3, "no temporary directory");
        }

        /* Every directory up to / counts: a 0755 folder inside one anyone
         * may write (no sticky bit) could be swapped for another. */
        char top[] = "/tmp/gp-trust-XXXXXX", shared[64], inner[96], sw[160], bad[160];
        if (mkdtemp(top)) {
            snprintf(shared, sizeof shared, "%s/shared", top);
            snprintf(inner, sizeof inner, "%s/mine", shared);
            mkdir(shared, 0755);
            mkdir(inner, 0755);
            snprintf(copy, sizeof copy, "%s/gravplug-abi10.so", inner);
            snprintf(cmd, sizeof cmd, "cp '%s/gravplug-abi10.so' '%s'", fixtures, copy);
            int copied = system(cmd) == 0;
            gp_plugin *t = NULL;
            chmod(shared, 0777);
            st = gp_plugin_open(copy, &t, err, sizeof err);
            ok(copied && st == GP_ERR_INVALID_ARGUMENT && !t && strstr(err, shared) && strstr(err, "sticky") &&
               strstr(err, copy), "a plugin below a world-writable folder without the sticky bit is refused: %s", err);
            gp_plugin_close(t);
            t = NULL;
            chmod(shared, 01777);
            st = gp_plugin_open(copy, &t, err, sizeof err);
            ok(st == GP_OK && t, "with the sticky bit (as /tmp) it loads (%s)", st == GP_OK ? "ok" : err);
            gp_plugin_close(t);
            t = NULL;
            chmod(shared, 0755);

            /* The file's owner: root or the user (only root can make a
             * file of another user's here). */
            if (geteuid() == 0 && chown(copy, 54321, 54321) == 0) {
                st = gp_plugin_open(copy, &t, err, sizeof err);
                ok(st == GP_ERR_INVALID_ARGUMENT && !t && strstr(err, "54321"),
                   "a plugin owned by another user is refused: %s", err);
                gp_plugin_close(t);
                t = NULL;
                if (chown(copy, 0, 0) != 0) diag("cannot give %s back to root", copy);
            } else {
                skip(1, "not root: no file of another user to try");
            }

            /* The same rules for a plain user (root makes one here): root's
             * file loads, another user's is refused, and a folder above
             * writable by all without the sticky bit is refused. */
            if (geteuid() == 0) {
                chmod(top, 0755);
                int status = -1;
                pid_t kid = fork();
                if (kid == 0) {
                    int good = setgid(65534) == 0 && setuid(65534) == 0;
                    gp_plugin *u = NULL;
                    good = good && gp_plugin_open(copy, &u, err, sizeof err) == GP_OK;
                    gp_plugin_close(u);
                    u = NULL;
                    _exit(good ? 0 : 1);
                }
                waitpid(kid, &status, 0);
                ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                   "as a plain user (uid 65534): root's plugin loads");
                int refused = 0;
                if (chown(copy, 54321, 54321) == 0) {
                    kid = fork();
                    if (kid == 0) {
                        gp_plugin *u = NULL;
                        int good = setgid(65534) == 0 && setuid(65534) == 0 &&
                                   gp_plugin_open(copy, &u, err, sizeof err) == GP_ERR_INVALID_ARGUMENT &&
                                   !u && strstr(err, "54321");
                        _exit(good ? 0 : 1);
                    }
                    waitpid(kid, &status, 0);
                    refused = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                    if (chown(copy, 0, 0) != 0) diag("cannot give %s back to root", copy);
                }
                ok(refused, "as a plain user: a plugin of another user is refused");
                chmod(shared, 0777);
                kid = fork();
                if (kid == 0) {
                    gp_plugin *u = NULL;
                    int good = setgid(65534) == 0 && setuid(65534) == 0 &&
                               gp_plugin_open(copy, &u, err, sizeof err) == GP_ERR_INVALID_ARGUMENT &&
                               !u && strstr(err, "sticky");
                    _exit(good ? 0 : 1);
                }
                waitpid(kid, &status, 0);
                ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                   "as a plain user: a world-writable folder above without the sticky bit is refused");
                chmod(shared, 0755);
                chmod(top, 0700);
            } else {
                skip(3, "not root: no plain user to become");
            }

            /* Check and load the same file: a link re-pointed at a
             * world-writable plugin between the check and dlopen loads
             * the file that was checked, never the new target. */
            snprintf(sw, sizeof sw, "%s/gravplug-swapped.so", inner);
            snprintf(bad, sizeof bad, "%s/gravplug-abi11.so", inner);
            snprintf(cmd, sizeof cmd, "cp '%s/gravplug-abi11.so' '%s' && chmod 0666 '%s'", fixtures, bad, bad);
            int made = system(cmd) == 0 && symlink(copy, sw) == 0;
            dlopen_swap_arm(sw, bad);
            st = gp_plugin_open(sw, &t, err, sizeof err);
            dlopen_swap_arm(NULL, NULL);
            ok(made && (st != GP_OK || (t && gp_plugin_api(t)->abi_minor == 0)),
               "a link re-pointed between the check and the load: the checked file or nothing is loaded (%s)",
               st == GP_OK ? (gp_plugin_api(t)->abi_minor == 0 ? "the checked file" : "THE NEW TARGET") : err);
            ok(st != GP_OK || strcmp(gp_plugin_path(t), sw) == 0, "the path reported is the one given");
            gp_plugin_close(t);
            t = NULL;
            remove(sw);
            remove(bad);
            remove(copy);
            rmdir(inner);
            rmdir(shared);
            rmdir(top);
        } else {
            skip(5, "no temporary directory");
        }

        /* A table of the right size with a NULL 1.0 member is refused at
         * load, naming the member: no host calls through it. */
        snprintf(path, sizeof path, "%s/gravplug-nullmember.so", fixtures);
        gp_plugin *nm = NULL;
        st = gp_plugin_open(path, &nm, err, sizeof err);
        ok(st == GP_ERR_ABI_MISMATCH && !nm && strstr(err, "describe_params") && strstr(err, path),
           "a table with describe_params NULL is refused: %s", err);
        gp_plugin_close(nm);

        /* A plugin built against ABI 1.0 loads under this 1.1 host; the
         * host sees none of the 1.1 members (its table ends at a guard
         * page: touching one would crash here). */
        gp_plugin *old = NULL;
        snprintf(path, sizeof path, "%s/gravplug-abi10.so", fixtures);
        st = gp_plugin_open(path, &old, err, sizeof err);
        ok(st == GP_OK, "a 1.0 plugin loads under a 1.1 host (%s)", st == GP_OK ? "ok" : err);
        if (st == GP_OK) {
            const gp_api *oa = gp_plugin_api(old);
            ok(oa->abi_minor == 0 && oa->struct_size == offsetof(gp_api, last_error) + sizeof oa->last_error,
               "it reports abi_minor 0 and the 1.0 struct_size (%zu)", oa->struct_size);
            ok(!GRAVPLUG_API_HAS(oa, set_state) && !GRAVPLUG_API_HAS(oa, predict) &&
               !GRAVPLUG_API_HAS(oa, get_positions) && !GRAVPLUG_API_HAS(oa, set_source_subset) &&
               !GRAVPLUG_API_HAS(oa, update_masses),
               "GRAVPLUG_API_HAS says no for every 1.1 member, without reading past struct_size");
            gp_solver *os = NULL;
            double p2[6] = {0, 0, 0, 1, 0, 0}, m2[2] = {1, 2}, a2[6];
            ok(oa->init(&os, NULL) == GP_OK && oa->set_particles(os, 2, p2, m2) == GP_OK &&
               oa->compute_forces(os, a2, NULL) == GP_OK && a2[0] == 2.0 && a2[3] == -1.0,
               "and computes through the 1.0 calls");
            oa->finalize(os);
            gp_plugin_close(old);
        } else {
            skip(3, "the 1.0 fixture did not load");
        }

        /* A plugin built against ABI 1.1 loads under this 1.2 host; the
         * host sees its 1.1 members and none of the 1.2 ones (its table
         * ends at update_masses, before a guard page). */
        snprintf(path, sizeof path, "%s/gravplug-abi11.so", fixtures);
        st = gp_plugin_open(path, &old, err, sizeof err);
        ok(st == GP_OK, "a 1.1 plugin loads under a 1.2 host (%s)", st == GP_OK ? "ok" : err);
        if (st == GP_OK) {
            const gp_api *oa = gp_plugin_api(old);
            ok(oa->abi_minor == 1 && oa->struct_size == offsetof(gp_api, update_masses) + sizeof oa->update_masses,
               "it reports abi_minor 1 and the 1.1 struct_size (%zu)", oa->struct_size);
            ok(GRAVPLUG_API_HAS(oa, set_state) && GRAVPLUG_API_HAS(oa, predict) &&
               GRAVPLUG_API_HAS(oa, get_positions) && GRAVPLUG_API_HAS(oa, set_source_subset) &&
               GRAVPLUG_API_HAS(oa, update_masses),
               "GRAVPLUG_API_HAS says yes for every 1.1 member");
            ok(!GRAVPLUG_API_HAS(oa, set_state_jerk) && !GRAVPLUG_API_HAS(oa, get_velocities) &&
               !GRAVPLUG_API_HAS(oa, compute_forces_ex) && !GRAVPLUG_API_HAS(oa, get_neighbours),
               "... and no for every 1.2 member, without reading past struct_size");
            gp_solver *os = NULL;
            double p2[6] = {0, 0, 0, 1, 0, 0}, m2[2] = {1, 2}, a2[6], v2[6] = {0}, t2[2] = {0};
            double x2[6];
            ok(oa->init(&os, NULL) == GP_OK && oa->set_particles(os, 2, p2, m2) == GP_OK &&
               oa->compute_forces(os, a2, NULL) == GP_OK && a2[0] == 2.0 && a2[3] == -1.0 &&
               oa->set_state(os, 2, NULL, p2, v2, a2, t2) == GP_OK && oa->predict(os, 1.0) == GP_OK &&
               oa->get_positions(os, 2, NULL, x2) == GP_OK && x2[0] == 1.0 && x2[3] == 0.5,
               "and computes and predicts through the 1.0 and 1.1 calls");
            oa->finalize(os);
            gp_plugin_close(old);
        } else {
            skip(4, "the 1.1 fixture did not load");
        }

        /* A plugin built against ABI 1.2 loads under this 1.3 host; the
         * host sees its 1.2 members and none of the 1.3 ones (its table
         * ends at get_neighbours, before a guard page), and a host's
         * 1.3-sized gp_outputs is read as 1.2's. */
        snprintf(path, sizeof path, "%s/gravplug-abi12.so", fixtures);
        st = gp_plugin_open(path, &old, err, sizeof err);
        ok(st == GP_OK, "a 1.2 plugin loads under a 1.3 host (%s)", st == GP_OK ? "ok" : err);
        if (st == GP_OK) {
            const gp_api *oa = gp_plugin_api(old);
            ok(oa->abi_minor == 2 && oa->struct_size == offsetof(gp_api, get_neighbours) + sizeof oa->get_neighbours,
               "it reports abi_minor 2 and the 1.2 struct_size (%zu)", oa->struct_size);
            ok(GRAVPLUG_API_HAS(oa, set_state_jerk) && GRAVPLUG_API_HAS(oa, get_velocities) &&
               GRAVPLUG_API_HAS(oa, compute_forces_ex) && GRAVPLUG_API_HAS(oa, get_neighbours),
               "GRAVPLUG_API_HAS says yes for every 1.2 member");
            ok(!GRAVPLUG_API_HAS(oa, set_source_groups) && !GRAVPLUG_API_HAS(oa, compute_field_ex),
               "... and no for every 1.3 member, without reading past struct_size");
            gp_solver *os = NULL;
            double p2[6] = {0, 0, 0, 1, 0, 0}, m2[2] = {1, 2}, a2[6], v2[6] = {0, 0, 0, 0, 1, 0};
            double t2[2] = {0}, st2[2], even[2] = {-7, -7};
            gp_outputs o;
            memset(&o, 0, sizeof o);
            o.struct_size = sizeof o;
            o.acc = a2;
            o.pair_step = st2;
            o.pair_step_even = even;   /* a 1.2 plugin leaves it alone */
            ok(oa->init(&os, NULL) == GP_OK && oa->set_particles(os, 2, p2, m2) == GP_OK &&
               oa->set_state(os, 2, NULL, p2, v2, a2, t2) == GP_OK && oa->compute_forces_ex(os, &o) == GP_OK &&
               a2[0] == 2.0 && a2[3] == -1.0 && st2[0] > 0 && st2[0] == st2[1] && even[0] == -7 && even[1] == -7,
               "and computes through the 1.2 calls, leaving the 1.3 outputs alone");
            oa->finalize(os);
            gp_plugin_close(old);
        } else {
            skip(4, "the 1.2 fixture did not load");
        }
    } else {
        skip(19, "GP_FIXTURES_DIR not set");
    }

    is_string(gp_status_name(GP_ERR_BAD_STATE), "GP_ERR_BAD_STATE", "gp_status_name");
    is_string(gp_status_name((gp_status)99), "GP_ERR_UNKNOWN", "gp_status_name of an unknown value");
    gp_plugin_close(NULL);
    gp_plugin_close(a);
    ok(1, "close");
    return done_testing();
}
