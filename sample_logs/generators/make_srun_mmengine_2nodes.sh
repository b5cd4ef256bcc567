#!/usr/bin/env bash
# Captures REAL `srun -l` + torchrun output where two "nodes" each have local ranks 0 and 1,
# every rank logging its OWN mmengine `time` / `data_time`, and one rank loading data slowly:
# sample_logs/ranks__srun_l_torchrun_2nodes_mmengine_straggler.log, used by
# tests/ranks/test_multinode_hosts.py.
#
#   srun -l -n 2 -O torchrun --nnodes 2 --nproc_per_node 2 --rdzv-backend c10d --tee 3 \
#       mmengine_toy.py --slow-rank 2 --slow-s 0.1 ...
# Lines are `<task>: [default<local rank>]:<mmengine line>`. Global rank 2's collate sleeps
# 0.1 s per batch; the c10d rendezvous decides which task gets node rank 1, so the log says
# the slow stream only as (task, local rank), which is what trainwatch keys it by.
#
# Needs root, Debian's Slurm and munge, torch and mmengine (NOT project dependencies), see
# make_srun_samples.sh and make_mmengine_rank_samples.sh; the local one-node cluster is the
# same (slurm_local.conf beside this script; state and logs in /tmp/tw_slurm; the daemons
# started here are stopped at the end by their pid files).
# Produced with Slurm 22.05.8, torch 2.13.0+cpu, mmengine 0.10.7, Python 3.11, 2 shared CPU cores.
# Run from the repo root:  bash sample_logs/generators/make_srun_mmengine_2nodes.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=sample_logs/generators
export SLURM_CONF="$PWD/$HERE/slurm_local.conf"
TORCHRUN=${TORCHRUN:-/work/torchenv/bin/torchrun}
export PYTHONWARNINGS="ignore::UserWarning"
TMP=$(mktemp -d /tmp/tw_srun_mm.XXXXXX)

mkdir -p /tmp/tw_slurm/state /tmp/tw_slurm/spool /run/munge
chown munge:munge /run/munge
STARTED_MUNGE=""
if ! munge -n > /dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    STARTED_MUNGE=1
fi
/usr/sbin/slurmctld -i
/usr/sbin/slurmd -N localhost
stop() {
    for pid in /tmp/tw_slurm/slurmd.pid /tmp/tw_slurm/slurmctld.pid; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2> /dev/null || true
    done
    if [ -n "$STARTED_MUNGE" ] && [ -f /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2> /dev/null || true
    fi
    rm -rf "$TMP"
}
trap stop EXIT
for _ in $(seq 30); do
    sinfo -h -o %t 2> /dev/null | grep -q idle && break
    sleep 1
done

# Both "nodes" are this host, so both agents think they should host the rendezvous store and
# neither does (seen: both time out as clients): task 0 hosts it, explicitly.
export TORCHRUN HERE TMP
srun -l -n 2 -O bash -c '$TORCHRUN --nnodes 2 --nproc_per_node 2 --rdzv-backend c10d \
    --rdzv-endpoint 127.0.0.1:29633 --rdzv-id twmm2 --rdzv-conf is_host=$([ "$SLURM_PROCID" = 0 ] && echo 1 || echo 0) \
    --tee 3 $HERE/mmengine_toy.py --iters 40 --interval 5 --all-ranks-stdout \
    --work-dir "$TMP/work$SLURM_PROCID" --slow-rank 2 --slow-s 0.1' \
    > sample_logs/ranks__srun_l_torchrun_2nodes_mmengine_straggler.log 2>&1
