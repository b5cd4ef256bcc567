#!/usr/bin/env bash
# Regenerates the mmengine per-rank-timing samples used by tests/ranks/test_mmengine_straggler.py:
# real torchrun (4 workers, CPU, gloo) running a real mmengine 0.10 Runner (mmengine_toy.py),
# every rank logging its OWN `time` / `data_time` (mmengine does not reduce them).
#
# Needs torch + mmengine (NOT project dependencies), e.g. the shared venv:
#     python3 -m venv /work/torchenv
#     /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl mmengine
# Run from the repo root:  bash sample_logs/generators/make_mmengine_rank_samples.sh
# Produced with torch 2.13.0+cpu, mmengine 0.10.7, Python 3.11, 2 shared CPU cores.
#
# Each run uses `--tee 3` AND `--log-dir ... --redirects 3`, so ONE run gives both layouts:
# the interleaved console (`[default<r>]:` on every line) and the per-rank tree
# <dir>/<rdzv-id>_<random>/attempt_0/<r>/{stdout,stderr}.log.
#
# 1. straggler: rank 2's collate sleeps 0.1 s per batch. Every rank's `time` is ~equal
#    (ranks 0,1,3 wait in DDP's allreduce); rank 2's `data_time` is ~0.1 s, the others' < 1 ms.
#      sample_logs/ranks__mmengine_tee3_straggler.log       (console)
#      sample_logs/ranks_mmengine_logdir_straggler/          (torchrun --log-dir tree)
#      sample_logs/ranks_mmengine_workdir_straggler/         (mmengine's own per-rank files,
#                                                             `<ts>_<user@host>_device<d>_rank<N>.log`)
# 2. control: the same command without --slow-rank (no straggler must be reported).
#      sample_logs/ranks__mmengine_tee3_control.log, sample_logs/ranks_mmengine_logdir_control/
# 3. pause: rank 1 sleeps 20 s once, in the data loading of iteration 22 (a rank that stops
#    advancing). Synchronous training: ranks 0,2,3 block in the allreduce of iteration 22,
#    so NO rank logs during the pause; the log shows the 20 s gap on every rank at once and,
#    afterwards, rank 1's windowed `data_time` and everyone's `time` inflated.
#      sample_logs/ranks__mmengine_tee3_pause.log
set -euo pipefail
cd "$(dirname "$0")/../.."
TORCHRUN=${TORCHRUN:-/work/torchenv/bin/torchrun}
SCRIPT=sample_logs/generators/mmengine_toy.py
TMP=$(mktemp -d /tmp/tw_mmengine.XXXXXX)
# The CPU wheel warns about numpy on import in every process: noise, not log content.
export PYTHONWARNINGS="ignore::UserWarning"
COMMON="--iters 40 --interval 5 --all-ranks-stdout"

run() {  # run <name> <port> <extra toy args...>
    local name=$1 port=$2
    shift 2
    $TORCHRUN --nproc_per_node 4 --tee 3 --log-dir "$TMP/$name/logs" --redirects 3 \
        --rdzv-id "mm_$name" --master-port "$port" $SCRIPT $COMMON --work-dir "$TMP/$name/work" "$@" \
        > "sample_logs/ranks__mmengine_tee3_$name.log" 2>&1
}

run straggler 29641 --slow-rank 2 --slow-s 0.1
run control 29642
run pause 29643 --stop-rank 1 --stop-iter 22 --stop-s 20

for name in straggler control; do
    rm -rf "sample_logs/ranks_mmengine_logdir_$name"
    cp -r "$TMP/$name/logs" "sample_logs/ranks_mmengine_logdir_$name"
done
rm -rf sample_logs/ranks_mmengine_workdir_straggler
mkdir -p sample_logs/ranks_mmengine_workdir_straggler
cp "$TMP"/straggler/work/*/*_rank*.log sample_logs/ranks_mmengine_workdir_straggler/
rm -rf "$TMP"
