"""Rank, host and attempt read from one line or one path (trainwatch/parsers/rank.py).

Every line here is real; sources are named next to each case.
"""

from __future__ import annotations

import pytest

from trainwatch.parsers.rank import (
    MEMBERSHIP_HINTS,
    TEXT_HINTS,
    host_label,
    is_launch_banner,
    is_worker_failure,
    looks_srun_labelled,
    mentioned_rank,
    path_attempt,
    path_host,
    path_rank,
    split_host,
    split_prefix,
    text_rank,
)

# shared/seeds/002 (4-rank torchrun + DeepSpeed CoCa nohup.out)
SEED002_KEY = "2024-02-20,09:49:41 | INFO | Added key: store_based_barrier_key:1 to store for rank: 2"
SEED002_BARRIER = (
    "2024-02-20,09:49:41 | INFO | Rank 3: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes."
)
SEED002_PROCESS = (
    "2024-02-20,09:49:42 | INFO | Running in distributed mode with multiple processes. "
    "Device: cuda:2.Process (global: 2, local 2), total 4."
)
SEED002_DS_INFO = (
    "[2024-02-20 09:49:52,918] [INFO] [logging.py:77:log_dist] [Rank -1] DeepSpeed info: "
    "version=0.8.2, git-hash=unknown, git-branch=unknown"
)
SEED002_TIMERS = (
    "[2024-02-20 09:55:01,105] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | "
    "optimizer_allgather: 1138.24 | optimizer_gradients: 14.24 | optimizer_step: 14.29"
)
SEED002_ARGS_LOCAL_RANK = "2024-02-20,09:49:53 | INFO |   local_rank: 0"
SEED002_ZERO = "Rank: 3 partition count [4, 4, 4, 4] and sizes[(38208, False), (688256, False)] "


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        (SEED002_KEY, 2),
        (SEED002_BARRIER, 3),
        (SEED002_PROCESS, 2),
        (SEED002_ZERO, 3),
        # sample_logs/ranks__torchrun_tee3_crash.log: torchrun's ChildFailedError block
        ("  rank      : 3 (local_rank: 3)", 3),
    ],
)
def test_world_membership_lines_name_their_rank(line: str, rank: int) -> None:
    assert mentioned_rank(line) == rank
    assert text_rank(line) == rank


@pytest.mark.parametrize("hint", [*TEXT_HINTS, *MEMBERSHIP_HINTS])
def test_a_line_holding_only_a_hint_is_still_looked_at(hint: str) -> None:
    """The three substring tests that rule lines out first let every hint through: a hint
    added to either tuple without one of them would silently never be read."""
    from trainwatch.parsers.rank import _may_name_a_rank

    assert _may_name_a_rank(f"x {hint} y")


def test_deepspeed_rank_minus_one_and_arg_dumps_are_not_ranks() -> None:
    assert text_rank(SEED002_DS_INFO) is None
    assert mentioned_rank(SEED002_DS_INFO) is None
    assert text_rank(SEED002_ARGS_LOCAL_RANK) is None


def test_rank_equals_attributes_a_record_but_is_not_membership() -> None:
    assert text_rank(SEED002_TIMERS) == 0
    # `[Rank 0]` in the same line is a membership form: rank 0 exists.
    assert mentioned_rank(SEED002_TIMERS) == 0
    # DeepSpeed timers without log_dist's `[Rank 0]` (shared/seeds/004 line 340): `rank=0`
    # attributes the record, but `rank=N` alone is no proof of world membership.
    line = "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99"
    assert text_rank(line) == 0
    assert mentioned_rank(line) is None


@pytest.mark.parametrize(
    ("line", "rank", "rest"),
    [
        # pytorch/pytorch#75087 (torchrun --tee 3 output quoted by stas00)
        (
            "[default3]:python: src/psm2_nccl_net.c:756: mq_progress_loop: Assertion `r->used' failed.",
            3,
            "python: src/psm2_nccl_net.c:756: mq_progress_loop: Assertion `r->used' failed.",
        ),
        # sample_logs/ranks__torchrun_tee3_crash.log (PyTorch's traceback prefix)
        ("[rank3]: Traceback (most recent call last):", 3, "Traceback (most recent call last):"),
        # sample_logs/ranks__torchrun_tee3_straggler.log (Megatron line keeps its leading space
        # minus the one the prefix regex eats)
        ("[default2]: [2026-11-22 04:23:12] iteration", 2, "[2026-11-22 04:23:12] iteration"),
        # Lightning-AI/litgpt#519 (XLA finetune, Lightning's rank_prefixed_message)
        (
            "[rank: 0] iter 34 step 35: iter time: 3372.20ms (optimizer.step)",
            0,
            "iter 34 step 35: iter time: 3372.20ms (optimizer.step)",
        ),
        # aws-samples/awsome-distributed-training picotron README (indented as markdown code)
        ("    [rank 2] Step: 1     | Loss: 10.9062", 2, "Step: 1     | Loss: 10.9062"),
    ],
)
def test_launcher_prefixes_are_split(line: str, rank: int, rest: str) -> None:
    assert split_prefix(line) == (rank, rest)


def test_pdsh_host_label() -> None:
    # stas00/ml-engineering training/emulate-multi-node.md: `deepspeed -H hostfile test2.py`
    line = "worker-1: [2022-09-08 12:07:10,635] [INFO] [launch.py:142:main] nnodes=2, num_local_procs=1, node_rank=1"
    assert host_label(line) == "worker-1"
    assert split_host(line)[1].startswith("[2022-09-08 12:07:10,635] [INFO]")
    # A DeepSpeed line without a host label has none.
    assert host_label(SEED002_DS_INFO) is None


def test_one_line_starting_with_a_number_is_only_a_candidate_srun_label() -> None:
    # looks_srun_labelled is per line; the runner needs several consistent lines
    # (tests/ranks/test_runner_ranks.py).
    assert looks_srun_labelled("0: [2026-02-02 12:00:00] iteration 10/100 | consumed samples: 100 |")
    assert not looks_srun_labelled(SEED002_KEY)


@pytest.mark.parametrize(
    ("path", "rank", "attempt", "host"),
    [
        # DeepSpeed --enable_each_rank_log: f"{log_name_prefix}_rank{dist_rank}.log",
        # prefix time.strftime("%Y%m%d%H%M%S") (deepspeed/launcher/launch.py)
        ("rank_logs/20240220094941_rank3.log", 3, None, None),
        ("logs/node1_rank7.out", 7, None, "node1"),
        ("logs/rank_3/train.log", 3, None, None),
        ("logs/rank3.log", 3, None, None),
        # torchrun --log-dir: <dir>/<run-id>/attempt_<k>/<local_rank>/{stdout,stderr}.log
        ("sample_logs/ranks_logdir_restart/job42_abc/attempt_1/2/stderr.log", 2, 1, None),
        ("run/none_x1/attempt_0/0/stdout.log", 0, 0, None),
        # no rank: the launcher's own log, a user name containing "rank"
        ("sample_logs/ranks_logdir_restart/launcher.log", None, None, None),
        ("/home/frank2/train.log", None, None, None),
    ],
)
def test_path_layouts(path: str, rank: int | None, attempt: int | None, host: str | None) -> None:
    assert path_rank(path) == rank
    assert path_attempt(path) == attempt
    assert path_host(path) == host


def test_launcher_markers() -> None:
    # sample_logs/ranks__torchrun_unprefixed_restart.log (torch 2.13)
    failed = (
        "E1122 04:24:12.362000 8518 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
        "(exitcode: -6) local_rank: 0 (pid: 8520) of binary: /work/main/.venv/bin/python3"
    )
    assert is_worker_failure(failed)
    # pytorch/pytorch#123808 title (older torch logging format)
    assert is_worker_failure(
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 17966) of binary:"
    )
    # shared/seeds/002 line 4 and stas00/ml-engineering emulate-multi-node.md
    assert is_launch_banner(
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
        "system being overloaded, please further tune the variable for optimal performance in your "
        "application as needed. "
    )
    assert is_launch_banner(
        "[2022-09-08 12:02:16,517] [INFO] [launch.py:136:main] WORLD INFO DICT: {'worker-0': [0], 'worker-1': [0]}"
    )
    assert not is_launch_banner(SEED002_TIMERS)
