#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# mpi-fuzz-cmdline — gravhost-mpi ranks started unlike each other (generated
# by tests/mpi/module.mk). Each case launches 2 ranks with mpirun's
# MPMD syntax, rank 0 with a fixed command line and rank 1 with a mutated
# one: options dropped, added, duplicated, swapped, values changed (--t-end
# as another number or the same number written otherwise), --restart with
# or without a path, unknown options, another config path, and GRAVPLUG_* /
# OMP_* variables given to rank 1 alone (mpirun -x in its app context).
# Some mutations leave the command line as it was.
#
# The oracle, per case: mpirun returns within LIMIT seconds (a rank left
# waiting in a collective call is a hang); when rank 1's arguments or
# environment differ, both ranks exit non-zero and stderr holds exactly
# one "gravhost:" line, which names rank 1 and quotes the first line
# where the two differ (gh_par_same_start compares the arguments, then the
# sorted GRAVPLUG_* and OMP_* variables); when they are the same, the run
# ends normally (rc 0 on both ranks, both ranks' final checkpoints there).
#
#   mpi-fuzz-cmdline.t [CASES [SEED]]    default 30 cases, seed 1
# Skipped without mpirun or gravhost-mpi.
import os, random, shutil, subprocess, sys, tempfile, time

MPIRUN = "@MPIRUN@"
BUILD = os.environ.get("GP_BUILD") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GHM = os.path.join(BUILD, "bin", "gravhost-mpi")
LIMIT = 60

if not (MPIRUN and os.access(MPIRUN, os.X_OK) and os.access(GHM, os.X_OK)):
    print("1..0 # SKIP mpirun or gravhost-mpi not found (install openmpi-bin, libopenmpi-dev)")
    sys.exit(0)

CASES = int(sys.argv[1]) if len(sys.argv) > 1 else 30
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rng = random.Random(SEED)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")

CONFIG = """solver = { plugin = "mpi-tree"; params = { eps = 0.05; theta = 0.5; }; };
initial_conditions = { model = "plummer"; n = 64; seed = 3; };
integrator = { name = "leapfrog"; params = { dt = 0.03125; }; };
run = { t_end = 0.125; progress = "never"; };
output = { log_interval = 0.0625; snapshot_interval = 0.0625; checkpoint_interval = 0.0625; };
"""

def mutate(args, other_cfg, missing_cfg, out):
    """rank 1's arguments (after "run") and extra environment."""
    a = list(args)
    extra = {}
    for _ in range(1 if rng.random() < 0.7 else 2):
        k = rng.randrange(12)
        if k == 0 and len(a) > 1:                       # drop an option and its value
            i = rng.randrange(1, len(a))
            del a[i:i + (2 if a[i] in ("--output", "--t-end") and i + 1 < len(a) else 1)]
        elif k == 1:                                    # add an option
            i = rng.randrange(1, len(a) + 1)
            a[i:i] = rng.choice([["--progress"], ["--no-progress"], ["--verbose"], ["--debug"],
                                 ["--restart"], ["--restart", out + "/x.gpck"],
                                 ["--t-end", "0.0625"], ["--t-end", "1e-3"], ["--output", out + "-b"],
                                 ["--bogus"], ["-x"], [""], ["--t-end"], ["--t-end", "inf"], ["--t-end", "-1"]])
        elif k == 2 and len(a) > 1:                     # duplicate one
            i = rng.randrange(1, len(a))
            a.insert(i, a[i])
        elif k == 3 and len(a) > 2:                     # swap two
            i, j = rng.sample(range(1, len(a)), 2)
            a[i], a[j] = a[j], a[i]
        elif k == 4 and "--t-end" in a:                 # --t-end: another value or another spelling
            i = a.index("--t-end") + 1
            if i < len(a):
                a[i] = rng.choice(["0.0625", "6.25e-2", "0.06250", "0.0625000000000001", "0.125", "0", "1e300",
                                   "nan", " 0.0625", "0x1p-4"])
        elif k == 5:                                    # another config path, same text or none
            a[0] = rng.choice([other_cfg, missing_cfg, a[0] + "/", "./" + os.path.basename(a[0])])
        elif k == 6:                                    # a GRAVPLUG_* variable
            extra[rng.choice(["GRAVPLUG_PATH", "GRAVPLUG_FUZZ", "GRAVPLUG_DEBUG"])] = rng.choice(["1", "", "/tmp"])
        elif k == 7:                                    # an OMP_* variable
            extra[rng.choice(["OMP_NUM_THREADS", "OMP_SCHEDULE", "OMP_PROC_BIND"])] = rng.choice(["1", "2", "static"])
        elif k == 8 and "--output" in a:                # another output directory
            i = a.index("--output") + 1
            if i < len(a):
                a[i] = rng.choice([a[i] + "/", a[i] + "-other", a[i] + "/.", ""])
        elif k == 9 and len(a) > 1:                     # one byte of one argument
            i = rng.randrange(len(a))
            if a[i]:
                j = rng.randrange(len(a[i]))
                a[i] = a[i][:j] + rng.choice("x-_ 0.Z") + a[i][j + 1:]
        # k 10, 11 (and the choices above that found nothing to change): as it was
    return a, extra

def start_text(argv, env_lines):
    return list(argv) + sorted(env_lines)

def main():
    print("1..2")
    tmp = tempfile.mkdtemp(prefix="mpi-fuzz-cmdline.")
    try:
        cfg = os.path.join(tmp, "run.cfg")
        other = os.path.join(tmp, "same-text.cfg")
        for p in (cfg, other):
            with open(p, "w") as f:
                f.write(CONFIG)
        base_env = ["%s=%s" % (k, v) for k, v in env.items() if k.startswith("GRAVPLUG") or k.startswith("OMP_")]
        failures = same = differ = 0
        times = []
        for case in range(-1, CASES):
            out = os.path.join(tmp, "out")
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out + "-b", ignore_errors=True)
            args0 = [cfg, "--output", out, "--t-end", "0.0625", "--no-progress"]
            args1, extra = (list(args0), {}) if case < 0 else mutate(args0, other, os.path.join(tmp, "none.cfg"), out)
            rc_files = [os.path.join(tmp, "rc.%d" % r) for r in range(2)]
            for p in rc_files:
                if os.path.exists(p):
                    os.unlink(p)
            # each rank through sh, which records the rank's own exit status
            # and exits 0: a non-zero exit would make mpirun kill the other
            # rank before its status is recorded
            wrap = '"$@"; echo $? > "%s"'
            cmd = [MPIRUN, "--oversubscribe", "-np", "1", "sh", "-c", wrap % rc_files[0], "sh", GHM, "run"] + args0
            cmd += [":", "-np", "1"]
            for k, v in extra.items():
                cmd += ["-x", "%s=%s" % (k, v)]
            cmd += ["sh", "-c", wrap % rc_files[1], "sh", GHM, "run"] + args1
            env1 = dict((e.split("=", 1)[0], e) for e in base_env)
            env1.update(("%s" % k, "%s=%s" % (k, v)) for k, v in extra.items())
            t0 = time.time()
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=LIMIT, env=env)
                rc, err = p.returncode, p.stderr
            except subprocess.TimeoutExpired:
                rc, err = "timeout", "no answer in %d s" % LIMIT
            times.append(time.time() - t0)
            rcs = [open(f).read().strip() if os.path.exists(f) else "-" for f in rc_files]
            t0_text = start_text([GHM, "run"] + args0, base_env)
            t1_text = start_text([GHM, "run"] + args1, list(env1.values()))
            why = None
            lines = [l for l in err.splitlines() if l.startswith("gravhost")]
            if rc == "timeout":
                why = "mpirun did not return in %d s (a hang)" % LIMIT
            elif t0_text == t1_text:
                same += case >= 0
                ckpts = [os.path.join(out, "checkpoint.gpck.%dof2" % r) for r in range(2)]
                if not (rc == 0 and rcs == ["0", "0"] and all(os.path.exists(c) for c in ckpts)):
                    why = "the same command line did not run normally (mpirun rc %s, ranks %s)" % (rc, rcs)
            else:
                differ += case >= 0
                i = next(k for k in range(max(len(t0_text), len(t1_text)))
                         if k >= len(t0_text) or k >= len(t1_text) or t0_text[k] != t1_text[k])
                mine = t1_text[i] if i < len(t1_text) else ""
                theirs = t0_text[i] if i < len(t0_text) else ""
                want = '"%s" where rank 0 has "%s"' % (mine[:120], theirs[:120])
                if rc != 0 or "0" in rcs or "-" in rcs:
                    why = "the command lines differ but mpirun rc %s, ranks %s" % (rc, rcs)
                elif len(lines) != 1:
                    why = "%d gravhost lines, not one" % len(lines)
                elif "rank 1 was started unlike rank 0" not in lines[0] or want not in lines[0]:
                    why = "the sentence does not name rank 1's difference %s" % want
            if case < 0:
                print("%s 1 - the same command line on both ranks runs to the end (%.2f s)%s"
                      % ("not ok" if why else "ok", times[-1], ": " + why if why else ""), flush=True)
                if why:
                    failures += 1
                    print("# " + err.replace("\n", "\n# "))
            elif why:
                failures += 1
                if failures <= 10:
                    print("# FAIL case %d: %s\n#   rank 1: %s %s\n#   stderr: %s" % (case, why, args1, extra,
                          err.strip().replace("\n", "\n#   ")[:800]), flush=True)
        times.sort()
        print("# %d cases: %d with rank 1 started otherwise (refused), %d that left the command line as it was "
              "(ran); per launch median %.2f s, max %.2f s" % (CASES, differ, same, times[len(times) // 2], times[-1]))
        print("%s 2 - %d launches with a mutated command line on rank 1: no hang, the difference named, both ranks "
              "stopped (%d failures)" % ("not ok" if failures else "ok", CASES, failures))
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

sys.exit(main())
