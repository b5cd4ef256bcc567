#!/usr/bin/env bash
# Regenerates the torchrun samples used by tests/ranks/ (real launcher output, CPU, gloo).
#
# Needs torch in the venv (NOT a project dependency; only for regenerating samples):
#     .venv/bin/pip install /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl
# Run from the repo root:  bash sample_logs/generators/make_rank_samples.sh
# Produced with torch 2.13.0+cpu, Python 3.11, 2 CPU cores. Each command below is the exact
# one that produced the sample named next to it; timings (and so the numbers) differ per run.
#
# 1. sample_logs/ranks__torchrun_tee3_straggler.log
#    torchrun --tee 3: every line of every worker prefixed `[default<local_rank>]:`,
#    all 4 ranks print identical iteration lines, rank 2 sleeps 50 ms in data loading.
# 2. sample_logs/ranks__torchrun_tee3_crash.log
#    same, rank 3 raises at iteration 8, --max-restarts 0: `[rank3]:` traceback and the
#    launcher's ChildFailedError with `Root Cause (first observed failure)`.
# 3. sample_logs/ranks__torchrun_unprefixed_restart.log
#    no --tee: the 4 workers inherit torchrun's stdout, so their identical lines arrive
#    unprefixed in one file; rank 1 raises at iteration 6 in the first attempt only,
#    --max-restarts 1: the launcher restarts the worker group, which re-runs iterations
#    1..12 with the same seeds (identical values) into the same file.
# 4. sample_logs/ranks_logdir_restart/
#    --log-dir + --redirects 3: per-rank files <dir>/<run-id>/attempt_<k>/<local_rank>/
#    {stdout,stderr}.log for attempt_0 (rank 1 crashes at 6) and attempt_1 (completes);
#    the launcher's own console output is ranks_logdir_restart/launcher.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
TORCHRUN=.venv/bin/torchrun
SCRIPT=sample_logs/generators/ddp_toy.py
# The CPU wheel warns about numpy on import in every process: noise, not log content.
export PYTHONWARNINGS="ignore::UserWarning"

$TORCHRUN --nproc_per_node 4 --tee 3 --master-port 29611 $SCRIPT \
    --steps 30 --slow-rank 2 --slow-s 0.05 --timers-every 5 \
    > sample_logs/ranks__torchrun_tee3_straggler.log 2>&1

$TORCHRUN --nproc_per_node 4 --tee 3 --max-restarts 0 --master-port 29612 $SCRIPT \
    --steps 30 --slow-rank 2 --slow-s 0.05 --timers-every 5 --crash-rank 3 --crash-step 8 \
    > sample_logs/ranks__torchrun_tee3_crash.log 2>&1 || true

$TORCHRUN --nproc_per_node 4 --max-restarts 1 --master-port 29613 $SCRIPT \
    --steps 12 --slow-rank 2 --slow-s 0.05 --timers-every 4 --crash-rank 1 --crash-step 6 \
    --crash-first-attempt-only \
    > sample_logs/ranks__torchrun_unprefixed_restart.log 2>&1

rm -rf sample_logs/ranks_logdir_restart && mkdir -p sample_logs/ranks_logdir_restart
$TORCHRUN --nproc_per_node 4 --max-restarts 1 --master-port 29614 \
    --log-dir sample_logs/ranks_logdir_restart --redirects 3 --rdzv-id job42 $SCRIPT \
    --steps 12 --slow-rank 2 --slow-s 0.05 --timers-every 4 --crash-rank 1 --crash-step 6 \
    --crash-first-attempt-only \
    > sample_logs/ranks_logdir_restart/launcher.log 2>&1
