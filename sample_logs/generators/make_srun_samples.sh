#!/usr/bin/env bash
# Captures REAL `srun -l` output for tests/ranks/test_srun_labels.py: a one-node Slurm cluster
# on localhost (slurmctld + slurmd + munge), then ddp_toy.py (gloo, CPU) launched by srun.
#
# Needs root, Debian's Slurm and munge, and torch (NOT project dependencies):
#     apt-get update && apt-get install -y slurm-wlm munge      # Slurm 22.05.8 (bookworm)
#     /work/torchenv/bin/pip install /opt/wheels/torch-2.13.0+cpu-*.whl
# Run from the repo root:  bash sample_logs/generators/make_srun_samples.sh
# The cluster's configuration is slurm_local.conf beside this script (SLURM_CONF points at it;
# /etc/slurm is not touched; state, spool, logs and pid files go to /tmp/tw_slurm). The daemons
# this script starts are stopped at the end (by their pid files).
#
# 1. sample_logs/ranks__srun_l_4tasks_straggler.log
#      srun -l -n 4 -O python ddp_toy.py ...   four tasks, srun labels each line `<task id>: `
#      (= SLURM_PROCID = the global rank); rank 2 sleeps 50 ms in data loading.
#      -O (--overcommit): 4 tasks on a 2-CPU node.
# 2. sample_logs/ranks__srun_l_torchrun_tee3.log
#      srun -l -n 1 torchrun --nproc_per_node 4 --tee 3 ...   one task (label `0: `) whose
#      torchrun prefixes its workers' lines `[default<local rank>]:`.
# 3. sample_logs/ranks__srun_l_torchrun_2tasks.log
#      srun -l -n 2 torchrun --nnodes 2 --nproc_per_node 2 --rdzv-backend c10d ... --tee 3
#      two torchrun agents as two "nodes" on one host: `<task>: [default<local rank>]:`. The
#      c10d rendezvous, not the task id, decides each agent's node rank, so the global rank
#      of a line is not in it: trainwatch keeps (task, local rank).
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=sample_logs/generators
export SLURM_CONF="$PWD/$HERE/slurm_local.conf"
PY=${PY:-/work/torchenv/bin/python}
TORCHRUN=${TORCHRUN:-/work/torchenv/bin/torchrun}
export PYTHONWARNINGS="ignore::UserWarning"

# --- the local cluster -------------------------------------------------------------------
mkdir -p /tmp/tw_slurm/state /tmp/tw_slurm/spool /run/munge
chown munge:munge /run/munge
STARTED_MUNGE=""
if ! munge -n > /dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    STARTED_MUNGE=1
fi
/usr/sbin/slurmctld -i          # -i: ignore state left by an earlier run
/usr/sbin/slurmd -N localhost   # the node is named localhost in slurm_local.conf
stop() {
    for pid in /tmp/tw_slurm/slurmd.pid /tmp/tw_slurm/slurmctld.pid; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2> /dev/null || true
    done
    if [ -n "$STARTED_MUNGE" ] && [ -f /run/munge/munged.pid ]; then
        kill "$(cat /run/munge/munged.pid)" 2> /dev/null || true
    fi
}
trap stop EXIT
for _ in $(seq 30); do
    sinfo -h -o %t 2> /dev/null | grep -q idle && break
    sleep 1
done

# --- the captures ----------------------------------------------------------------------------
srun -l -n 4 -O $PY $HERE/ddp_toy.py --steps 20 --slow-rank 2 --slow-s 0.05 --timers-every 5 \
    > sample_logs/ranks__srun_l_4tasks_straggler.log 2>&1

srun -l -n 1 -O $TORCHRUN --nproc_per_node 4 --tee 3 --master-port 29621 $HERE/ddp_toy.py \
    --steps 12 --slow-rank 2 --slow-s 0.05 --timers-every 4 \
    > sample_logs/ranks__srun_l_torchrun_tee3.log 2>&1

srun -l -n 2 -O $TORCHRUN --nnodes 2 --nproc_per_node 2 --rdzv-backend c10d \
    --rdzv-endpoint 127.0.0.1:29622 --rdzv-id twjob --tee 3 $HERE/ddp_toy.py \
    --steps 12 --slow-rank 2 --slow-s 0.05 --timers-every 4 \
    > sample_logs/ranks__srun_l_torchrun_2tasks.log 2>&1
