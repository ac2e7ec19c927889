#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/gpu/run-all.sh — on a machine with an NVIDIA GPU: build the CUDA
# plugins, run their tests for real, then the benchmarks, and record
# everything in bench/results/gpu/raw/gpu-<GPU name>-<stage>.txt.
#
#   bench/gpu/run-all.sh            every stage below, in order
#   bench/gpu/run-all.sh STAGE...   only these stages:
#     tests       conformance (cuda-direct, cuda-tree), gpu-accuracy,
#                 gpu-edges, gpu-abi11, gpu-groups, gpu-drift, gpu-nodevice,
#                 gpu-walk-emu (prove)                             ~1-2 min
#     sanitize    compute-sanitizer memcheck, racecheck and synccheck over
#                 gpu-abi11, gpu-drift and gpu-edges at N = 2048 (SAN_N):
#                 the asynchronous copies and kernels the emulator runs in
#                 order                                            ~3-6 min
#     direct      cuda-direct interactions/s, N = 2^14 .. 2^20      ~1 min
#     jerk        cuda-direct acc + jerk (ABI 1.2 compute_forces_ex) against
#                 acc alone, interactions/s, N = 2^16 and 2^18, mixed and
#                 double                                            ~1 min
#     tree-small  cuda-tree, Plummer and galaxy, N = 2^16 .. 2^20   ~3 min
#     tree-large  cuda-tree, Plummer and galaxy, N = 2^22, 2^24     ~5-8 min
#     block       block steps through ABI 1.1 and 1.0 side by side (cudabench
#                 block): cuda-tree, galaxy and Plummer, 2^24 and 2^20, 1%
#                 active (largest |a|, and random), with get_stats' transfer
#                 seconds per step; the plugin's debug phases in .txt.log
#                                                                    ~5-8 min
#     group-cells cuda-tree's group_cell (the most sources of the cell an
#                 i-group is cut from) swept over GROUP_CELLS (default 1024
#                 2048 4096): a 1% block step (random and largest |a|, galaxy
#                 and Plummer, GC_N = 2^24) and a full call (2^20), walk
#                 seconds and interactions                           ~5-7 min
#     ncu         Nsight Compute on the walk kernel of one full call (Plummer
#                 2^20, bmax theta 0.5): speed of light, occupancy, launch
#                 stats, and thread instructions per interaction (ncu's
#                 count over cudabench's interactions of the same call) ~2 min
#     ncu-step    Nsight Compute times every kernel of cudabench block (galaxy
#                 2^24, 1% accel, 2 steps a path): the refit's gather, moments
#                 and records against the walk; one CSV row a launch  ~3-5 min
#     block-pays  bench/block-pays.py on cuda-tree: make run's galaxy at 2^17,
#                 block-rk2 with make run's settings at eta 0.2/0.25/0.3
#                 against leapfrog at three dt, both with make run's
#                 acceleration MAC, to equal max |dE/E| (energies from
#                 cpu-direct on the host's cores, outside the timing) ~4-6 min
#     hermite     hermite (gravhost) on cuda-direct against cpu-direct on every
#                 host core, Plummer 2^16 and 2^18 (HERMITE_N), t = 0 .. 1/16
#                                                                    ~3-8 min
#     cores       block-rk2 (gravhost) on cuda-tree against cpu-tree on every
#                 host core, galaxy 2^20 (CORES_N), t = 0 .. 1 (CORES_T) ~2-5 min
#     mpi         mpi-tree at P = 1, 2, 4, ... up to the host's cores, galaxy 2^22
#                 (MPI_N), a full call and a 1% block step's (gravhost-mpi's cut; MPI_RUNS=block
#                 for the block steps alone); needs mpirun
#                                                                    ~5-10 min
#     gothic      bench/gpu/gothic.py: make run's galaxy and settings at 2^20,
#                 2^22, 2^24 (GOTHIC_N, log2 list), its block scheme against
#                 leapfrog dt 1/32 .. 1/128 at equal max |dE/E| to t = 1
#                 (GOTHIC_T), energies from a tighter cuda-tree; the same at
#                 2^20 (GOTHIC_CORES_N) on cpu-tree with every host core; a
#                 1% block step at 2^24 (GOTHIC_STEP_N) and a shared step at
#                 2^24 (GOTHIC_SHARED_N) beside Bonsai's; the block runs
#                 and the 1% step again with drift = on (GOTHIC_DRIFT,
#                 "" for none)                                    ~6-9 min
#     (sanitize, group-cells, ncu-step, hermite, cores, mpi and gothic are not in the default list; GPU_DIRECT and
#     GPU_TREE swap the GPU plugin for a dry run on a machine without one, GPU_OUT the results folder)
# Each stage fits in a 10-minute command. Environment: JOBS (make -j),
# CUDA_ARCH (passed to make), GPU_NAME (overrides the name in file names),
# TREE_SMALL / TREE_LARGE (the log2 N lists of the tree stages), NO_BUILD=1
# (use a build/ prepared by bench/gpu/pack-for-device.sh; no compiler needed).
set -u
cd "$(dirname "$0")/../.." || exit 1
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
if [ -n "${CUDA_ARCH:-}" ]; then MAKEARCH="CUDA_ARCH=$CUDA_ARCH"; else MAKEARCH=""; fi

gpu_name=${GPU_NAME:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)}
[ -n "$gpu_name" ] || gpu_name="unknown-gpu"
tag=$(printf '%s' "$gpu_name" | tr -c 'A-Za-z0-9._-' '-' | sed 's/--*/-/g; s/-$//')
out=${GPU_OUT:-bench/results/gpu/raw}
mkdir -p "$out"

header() { # what, file
    {
        echo "# $1"
        echo "# gpu: $gpu_name"
        echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "# git: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "# host: $(uname -n), $(nproc 2>/dev/null) cores"
        # whether the cores are hyperthreads decides what P = 16 ranks can reach
        lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)):' |
            sed 's/  */ /g; s/^/# lscpu: /'
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | sed 's/^/# nvidia-smi: /'
    } > "$2"
}

build() {
    # NO_BUILD=1: build/ was prepared elsewhere (bench/gpu/pack-for-device.sh)
    [ -n "${NO_BUILD:-}" ] && return 0
    make -j"$JOBS" $MAKEARCH cuda build/t/conformance-cuda-direct.t build/t/conformance-cuda-tree.t \
        build/plugins/gravplug-cpu-direct.so >/dev/null || { echo "run-all: build failed" >&2; exit 1; }
}

stage_tests() {
    f="$out/gpu-$tag-tests.txt"
    header "GPU tests (prove)" "$f"
    prove -v -e '' build/t/conformance-cuda-direct.t build/t/conformance-cuda-tree.t \
        build/t/gpu-accuracy.t build/t/gpu-edges.t build/t/gpu-abi11.t build/t/gpu-groups.t build/t/gpu-drift.t \
        build/t/gpu-nodevice.t build/t/gpu-walk-emu.t >> "$f" 2>&1
    echo "tests: $f (exit $?)"
}

# what the emulator cannot see: every copy and kernel runs there in
# order, so an ordering fault of the asynchronous runtime shows only here
stage_sanitize() {
    f="$out/gpu-$tag-sanitize.txt"
    header "compute-sanitizer over the device tests" "$f"
    cs=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
    if [ ! -x "$cs" ]; then
        echo "# no compute-sanitizer on PATH or in CUDA_HOME/bin: nothing checked" >> "$f"
        echo "sanitize: $f (no compute-sanitizer)"
        return
    fi
    bad=0
    for tool in memcheck racecheck synccheck; do
        for t in gpu-abi11 gpu-drift gpu-edges; do
            GP_GPU_TEST_N=${SAN_N:-2048} timeout 300 "$cs" --tool "$tool" --error-exitcode 9 "build/t/$t.t" >> "$f" 2>&1
            rc=$?
            echo "# $tool $t: exit $rc" >> "$f"
            [ $rc = 0 ] || bad=1
        done
    done
    echo "sanitize: $f (exit $bad)"
}

stage_direct() {
    f="$out/gpu-$tag-direct.txt"
    header "cuda-direct interactions per second (bench/gpu/cudabench direct)" "$f"
    for args in "--precision mixed --eps 0.01" "--precision mixed --eps 0" "--precision single --eps 0.01" \
                "--precision double --eps 0.01 --nmax 18"; do
        build/bench/cudabench direct $args >> "$f" 2>&1
    done
    echo "direct: $f"
}

stage_jerk() {
    f="$out/gpu-$tag-jerk.txt"
    header "cuda-direct acc + jerk against acc (bench/gpu/cudabench jerk)" "$f"
    for args in "--precision mixed --eps 0.01" "--precision double --eps 0.01"; do
        build/bench/cudabench jerk --nmin 16 --nmax 18 $args >> "$f" 2>&1
    done
    echo "jerk: $f"
}

CONFIGS_TREE='mac=bmax theta=0.3|mac=bmax theta=0.5|mac=bmax theta=0.7|mac=bh theta=0.5|mac=multipole theta=0.5|mac=acceleration delta_acc=0.03125|mac=acceleration delta_acc=0.0078125|mac=acceleration delta_acc=0.001953125|mac=bmax theta=0.5 order=monopole|mac=bmax theta=0.5 precision=single'

tree_stage() { # name, exponents
    name=$1 exps=$2
    f="$out/gpu-$tag-$name.txt"
    header "cuda-tree seconds per full evaluation and errors (bench/gpu/cudabench tree)" "$f"
    for model in plummer galaxy; do
        for e in $exps; do
            n=$((1 << e))
            set --
            old_ifs=$IFS; IFS='|'
            for c in $CONFIGS_TREE; do set -- "$@" --config "$c"; done
            IFS=$old_ifs
            build/bench/cudabench tree --model "$model" --n "$n" --repeats 5 --sample 4096 --active 0.01 "$@" >> "$f" 2>&1
        done
    done
    echo "$name: $f"
}

stage_block() {
    f="$out/gpu-$tag-block.txt"
    header "block steps through ABI 1.1 and 1.0 (bench/gpu/cudabench block)" "$f"
    : > "$f.log" # emptied: the runs below append their debug lines
    # accel: the 1% with the largest |a| (a block step's deepest level);
    # random: a new random 1% each step (the sparse worst case). Both handed
    # over in ascending index order, as gravhost's level bins give them; one
    # run in the drawn order (by |a|) compares with runs before that option.
    # The plugin's debug lines (phases of each call, i-groups) go to a
    # second file.
    for model in galaxy plummer; do
        for e in ${BLOCK_N:-24 20}; do
            for sel in accel random; do
                CUDABENCH_LOG=debug build/bench/cudabench block --plugin cuda-tree --model "$model" --n $((1 << e)) \
                    --active 0.01 --steps 8 --select $sel --config "mac=bmax theta=0.5" >> "$f" 2>> "$f.log"
            done
        done
    done
    build/bench/cudabench block --plugin cuda-tree --model galaxy --n $((1 << 24)) --active 0.01 \
        --steps 8 --select accel --order drawn --config "mac=bmax theta=0.5" >> "$f" 2>&1
    build/bench/cudabench block --plugin cuda-tree --model galaxy --n $((1 << 24)) --active 0.01 \
        --steps 8 --config "mac=acceleration delta_acc=0.0078125" >> "$f" 2>&1
    build/bench/cudabench block --plugin cuda-direct --model plummer --n $((1 << 20)) --active 0.01 \
        --steps 8 --config "precision=mixed" >> "$f" 2>&1
    echo "block: $f"
}

# cuda-tree's group_cell, swept: the block step's walk against the full
# call's (a smaller cell keeps a sparse subset's groups tighter, with
# fewer members each; only a device can say which costs less).
stage_group_cells() {
    f="$out/gpu-$tag-group-cells.txt"
    header "cuda-tree group_cell swept (bench/gpu/cudabench block and tree)" "$f"
    : > "$f.log"
    for gc in ${GROUP_CELLS:-1024 2048 4096}; do
        for model in galaxy plummer; do
            for sel in random accel; do
                CUDABENCH_LOG=debug build/bench/cudabench block --plugin cuda-tree --model "$model" \
                    --n "${GC_N:-16777216}" --active 0.01 --steps 8 --select $sel \
                    --config "mac=bmax theta=0.5 group_cell=$gc" >> "$f" 2>> "$f.log"
            done
            build/bench/cudabench tree --model "$model" --n 1048576 --repeats 5 --sample 4096 \
                --config "mac=bmax theta=0.5 group_cell=$gc" >> "$f" 2>&1
        done
    done
    echo "group-cells: $f"
}

# Whether a tool a stage needs is here; if not, says so in the stage's file
# and on the terminal. Args: tool file stage.
need() {
    command -v "$1" > /dev/null 2>&1 && return 0
    echo "$1 is not on PATH: nothing measured" >> "$2"
    echo "$3: skipped (no $1)"
    return 1
}

stage_ncu() {
    f="$out/gpu-$tag-ncu.txt"
    header "Nsight Compute on walk_kernel: Plummer 2^20, bmax theta 0.5, one full call" "$f"
    need ncu "$f" ncu || return 0
    tree="build/bench/cudabench tree --model plummer --n 1048576 --repeats 1 --config mac=bmax\ theta=0.5"
    # the interactions of that call, from cudabench without the profiler
    sh -c "$tree" > "$out/.ncu-tree.txt" 2>&1
    ncu --kernel-name regex:walk_kernel --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
        --metrics smsp__thread_inst_executed.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum \
        sh -c "$tree" >> "$f" 2>&1
    cat "$out/.ncu-tree.txt" >> "$f"
    # RESULT,tree,model,N,config,...,pp_per_particle,pc_per_particle (fields 19, 20)
    awk -F, '/^RESULT,tree/ && !done { n = $4; ipp = $19 + $20; done = 1 }
             /smsp__thread_inst_executed.sum/ { k = split($0, w, " "); v = w[k]; gsub(/[^0-9.]/, "", v); inst = v }
             END { if (n && ipp && inst) printf "# thread instructions per interaction: %.1f (%s / (%d x %.1f))\n", inst / (n * ipp), inst, n, ipp;
                   else print "# thread instructions per interaction: not found in the output above" }' \
        "$out/.ncu-tree.txt" "$f" >> "$f"
    rm -f "$out/.ncu-tree.txt"
    echo "ncu: $f"
}

# Every kernel of a block run at 2^24 timed one by one (Nsight Compute,
# clocks at base, so read ratios): where compute_forces' 3.2 ms "tree
# refit and records" of a 1% step goes (the particle gather, the
# level-by-level moments, the walk records), next to the walk. One CSV row
# a launch, in launch order (the build's kernels first, then per step:
# predict, gathers, refit, i-records, groups, walk, scatter), and a
# summary per kernel name.
stage_ncu_step() {
    f="$out/gpu-$tag-ncu-step.txt"
    header "Nsight Compute: every kernel of cudabench block, galaxy 2^24, 1% accel, 2 steps per path" "$f"
    need ncu "$f" ncu-step || return 0
    ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw \
        build/bench/cudabench block --plugin cuda-tree --model galaxy --n $((1 << 24)) --active 0.01 --steps 2 \
        --select accel --config "mac=bmax theta=0.5" > "$f.csv" 2>> "$f"
    echo "# kernel, launches, time (sum, ncu units), dram read, dram write (sums)" >> "$f"
    # Kernel Name and the three metrics, by their header names
    awk -F'","' 'NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); c[h] = i } next }
                 c["Kernel Name"] && $0 ~ /^"/ {
                     k = $c["Kernel Name"]; sub(/\(.*/, "", k); sub(/^.* /, "", k)
                     t = $c["gpu__time_duration.sum"]; gsub(/[",]/, "", t)
                     r = $c["dram__bytes_read.sum"]; gsub(/[",]/, "", r)
                     w = $c["dram__bytes_write.sum"]; gsub(/[",]/, "", w)
                     if (t + 0 > 0) { n[k]++; T[k] += t; R[k] += r; W[k] += w }
                 }
                 END { for (k in n) printf "%s %d %.6g %.6g %.6g\n", k, n[k], T[k], R[k], W[k] }' "$f.csv" |
        sort -k3 -g -r >> "$f"
    echo "ncu-step: $f (each launch in $f.csv)"
}

stage_block_pays() {
    # make run's model and settings (host_stub/default.cfg: the heavy disk,
    # block-rk2 with the jerk bound and the level-switch shift, the
    # acceleration MAC), at make run's eta and on either side of it
    python3 bench/block-pays.py --plugin "${GPU_TREE:-cuda-tree}" --model galaxy --n "${BLOCK_PAYS_N:-131072}" \
        --ic disk_mass=0.1 --t 2 --dt 0.25 --schemes block-rk2 --etas 0.2,0.25,0.3 \
        --params eta_jerk=1,shadow=0.125 --solver mac=acceleration,delta_acc=0.002 \
        --leapfrog 5,6,7 --repeats 1 --sample 0.5 --out "$out/gpu-$tag-block-pays" \
        && echo "block-pays: $out/gpu-$tag-block-pays.md"
}

# One gravhost run as one RESULT line: label, plugin, integrator, model, N,
# t reached, final dE/E, particle forces, interactions, wall s (gravhost's
# own clock, the integration alone), exit code. Args: label plugin
# solver-params integrator integrator-params model n t_end timeout.
gravhost_run() {
    d=$(mktemp -d)
    printf 'solver = { plugin = "%s"; params = { %s }; };\n' "$2" "$3" > "$d/run.cfg"
    printf 'initial_conditions = { model = "%s"; n = %s; seed = 1; };\n' "$6" "$7" >> "$d/run.cfg"
    printf 'integrator = { name = "%s"; params = { %s }; };\n' "$4" "$5" >> "$d/run.cfg"
    printf 'run = { t_end = %s; };\n' "$8" >> "$d/run.cfg"
    # a log line every t_end/4 (each costs an energy, a full force call): a run
    # stopped by the timeout still says how far it got
    li=$(awk -v t="$8" 'BEGIN { printf "%.17g", t / 4 }')
    printf 'output = { dir = "%s/out"; log_interval = %s; snapshot_interval = 0.0; };\n' "$d" "$li" >> "$d/run.cfg"
    # --progress for the last line's steps' own time (wall_s also holds the
    # log lines' energies, a full force call each, and the setup)
    timeout -k 5 "$9" build/bin/gravhost run "$d/run.cfg" --progress > "$d/log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || sed 's/^/# gravhost: /' "$d/log" | tail -n 3
    steps=$(sed -n 's/.*, \([0-9.]*\) s of it in steps.*/\1/p' "$d/log" | tail -n 1)
    awk -F'\t' -v l="$1" -v p="$2" -v i="$4" -v m="$6" -v n="$7" -v rc=$rc -v st="${steps:-nan}" '
        /^#/ { next }
        !h { for (k = 1; k <= NF; k++) c[$k] = k; h = 1; next }
        { last = $0 }
        END { split(last, f, "\t");
              printf "RESULT,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", l, p, i, m, n, f[c["time"]], f[c["dE_rel"]],
                     f[c["particle_forces"]], f[c["interactions"]], f[c["wall"]], st, rc }' "$d/out/diagnostics.tsv" 2>/dev/null
    rm -rf "$d"
}

# Hermite on cuda-direct against cpu-direct on every host core: the same
# Plummer sphere, eps, eta and end time (HERMITE_N: log2 N list)
stage_hermite() {
    f="$out/gpu-$tag-hermite.txt"
    header "hermite (gravhost): cuda-direct against cpu-direct with $(nproc) threads" "$f"
    echo "# RESULT,label,plugin,integrator,model,N,t,dE_rel,particle_forces,interactions,wall_s,steps_s,rc" >> "$f"
    for e in ${HERMITE_N:-16 18}; do
        n=$((1 << e))
        for p in "${GPU_DIRECT:-cuda-direct}|eps = 0.01;" "cpu-direct|eps = 0.01; threads = $(nproc);"; do
            gravhost_run hermite "${p%%|*}" "${p#*|}" hermite "dt = 0.0625; eta = 0.02;" plummer "$n" \
                "${HERMITE_T:-0.0625}" "${HERMITE_TIMEOUT:-240}" >> "$f"
        done
    done
    echo "hermite: $f"
}

# block-rk2 at eta 0.2 with the softening criterion alone (the scheme's
# own defaults otherwise; `make run`'s eta_jerk and shadow are tuned to its
# 50k heavy disk) on cuda-tree against cpu-tree on every host core: the
# galaxy with its default disk, CORES_N particles (default 2^20), t = 0 ..
# CORES_T (default 1, four top steps: at 1/4 the steps were 0.52 s of the
# GPU run's 8.1 s)
stage_cores() {
    f="$out/gpu-$tag-cores.txt"
    header "block-rk2 (gravhost): cuda-tree against cpu-tree with $(nproc) threads" "$f"
    echo "# RESULT,label,plugin,integrator,model,N,t,dE_rel,particle_forces,interactions,wall_s,steps_s,rc" >> "$f"
    for p in "${GPU_TREE:-cuda-tree}|eps = 0.01; theta = 0.5;" "cpu-tree|eps = 0.01; theta = 0.5; threads = $(nproc);"; do
        gravhost_run cores "${p%%|*}" "${p#*|}" block-rk2 "dt = 0.25; eta = 0.2;" galaxy "${CORES_N:-1048576}" \
            "${CORES_T:-1}" "${CORES_TIMEOUT:-240}" >> "$f"
    done
    echo "cores: $f"
}

# mpi-tree on the GPU machine's host cores (the GPU idle): P = 1, 2, 4, ...
# up to the cores, one thread a rank, galaxy MPI_N (default 2^22): a full
# force call (equal counts per rank), and a block step's (the central 1%,
# decomposed as gravhost-mpi's migrations do, every level set shared over
# the ranks: with equal counts the whole centre sits on one rank, and a
# plain cut by weight leaves twice the mean of it on one);
# bench/mpi-tree-scaling.c says what the columns are. Needs mpirun on the
# machine. A build carried from elsewhere (pack-for-device.sh) brings Open
# MPI's libraries in build/devlibs/mpi; the machine's own, when it has
# them, are the ones that match its mpirun.
stage_mpi() {
    f="$out/gpu-$tag-mpi.txt"
    header "mpi-tree scaling on $(nproc) host cores (bench/mpi-tree-scaling)" "$f"
    need mpirun "$f" mpi || return 0
    mpilibs="" libs="the machine's own"
    if [ -d build/devlibs/mpi ] && ! ldconfig -p 2>/dev/null | grep -q 'libmpi\.so\.40 '; then
        mpilibs="$PWD/build/devlibs/mpi:" libs="carried, build/devlibs/mpi"
    fi
    echo "# Open MPI: $(mpirun --version 2>&1 | head -n 1); libraries: $libs" >> "$f"
    p=1
    while [ "$p" -le "$(nproc)" ]; do
        # MPI_RUNS="block" leaves out the full calls (equal counts), which
        # a 10-minute call could not fit with the block steps up to P = 16
        for run in ${MPI_RUNS:-full block}; do
            frac=""
            [ "$run" = block ] && frac=0.01
            env LD_LIBRARY_PATH="$mpilibs${LD_LIBRARY_PATH:-}" OMPI_ALLOW_RUN_AS_ROOT=1 \
                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 GP_ACTIVE_FRACTION=$frac ${frac:+GP_ACTIVE_BALANCE=levels} \
                timeout -k 5 "${MPI_TIMEOUT:-120}" mpirun --oversubscribe -np "$p" build/bench/mpi-tree-scaling galaxy \
                "${MPI_N:-4194304}" 3 >> "$f" 2>&1
        done
        p=$((p * 2))
    done
    echo "mpi: $f"
}

# GOTHIC's headline (block steps against shared ones at 2^20-2^24) on
# make run's model, and the GPU against the host's cores; one results file
stage_gothic() {
    f="$out/gpu-$tag-gothic.txt"
    header "block steps against leapfrog at equal error, GPU against the host's cores (bench/gpu/gothic.py)" "$f"
    exps=$(echo ${GOTHIC_N:-20 22 24} | tr ' ' ',')
    python3 bench/gpu/gothic.py --out "$f" --tree "${GPU_TREE:-cuda-tree}" --n "$exps" \
        --cores-n "${GOTHIC_CORES_N:-20}" --t "${GOTHIC_T:-1}" --step-n "${GOTHIC_STEP_N:-24}" \
        --shared-n "${GOTHIC_SHARED_N:-24}" --drift "${GOTHIC_DRIFT-on}" --timeout "${GOTHIC_TIMEOUT:-240}" > /dev/null
    echo "gothic: $f (exit $?)"
}

build
stages=${*:-tests direct jerk tree-small tree-large block ncu block-pays}
for s in $stages; do
    case "$s" in
    tests) stage_tests ;;
    sanitize) stage_sanitize ;;
    direct) stage_direct ;;
    jerk) stage_jerk ;;
    tree-small) tree_stage tree-small "${TREE_SMALL:-16 18 20}" ;;
    tree-large) tree_stage tree-large "${TREE_LARGE:-22 24}" ;;
    block) stage_block ;;
    group-cells) stage_group_cells ;;
    ncu) stage_ncu ;;
    ncu-step) stage_ncu_step ;;
    block-pays) stage_block_pays ;;
    hermite) stage_hermite ;;
    cores) stage_cores ;;
    mpi) stage_mpi ;;
    gothic) stage_gothic ;;
    *) echo "run-all: unknown stage '$s' (tests sanitize direct jerk tree-small tree-large block group-cells ncu ncu-step block-pays hermite cores mpi gothic)" >&2; exit 2 ;;
    esac
done
