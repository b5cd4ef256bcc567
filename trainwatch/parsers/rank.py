"""Where a line comes from: its rank (prefix > text > path), host, and launch attempt.

Launchers interleave several processes into one stream and mark each line in their own
way; per-rank files say the rank in their path. Everything here is pure string work on
one line or one path, so the runner can call it for every line.

Note on numbering: `torchrun --tee`'s `[default3]:` and the `--log-dir` directory
`attempt_0/3/` carry the *local* rank (torch/distributed/elastic/agent/server/
local_elastic_agent.py: prefix `[${role_name}${local_rank}]:`); on one node it equals the
global rank. `[rank3]:` (PyTorch's traceback prefix), `srun -l`'s `3: ` (task id) and
DeepSpeed's `--enable_each_rank_log` file names carry the global rank.
"""

from __future__ import annotations

import re

# Per-line prefixes added by launchers (stripped before parsing):
#   [rank3]:  PyTorch, before traceback lines of a process with a process group
#   [default3]:  torchrun --tee 3 (role "default" + local rank)
#   [PID:6552] [RANK:4]  loggers that stamp pid and rank on every line
#   [1,5]<stdout>:  OpenMPI `mpirun --tag-output` (job id, rank); SageMaker adds `mpirank:` and the host
#   [rank: 0]  Lightning's `rank_prefixed_message` (`rank_zero_info`, Fabric scripts' `[rank: 0] Seed set to 42`);
#              ParlAI pads it: `[rank:  0]`
#   [GPU3]  PyTorch's DDP tutorial series (minGPT-ddp, multigpu_torchrun.py): `[GPU3] Epoch 1 | Iter 0 | ...`
#   Rank[0],  OneFlow's model zoo (DeepFM, DLRM: `Rank[0], Step 46, Loss 3.1016, Latency 18.955 ms, ...`)
#   [rank 2]  picotron's per-rank log lines (`[rank 2] Step: 1 | Loss: 10.9062 | ...`)
_PREFIX = re.compile(
    r"^[ \t]{0,8}(?:\[(?:rank|default)(\d{1,9})(?!\d)\]:|\[PID:\d+\] \[RANK:(\d{1,9})(?!\d)\]"
    r"|\[\d{1,9},(?:mpirank:)?(\d{1,9})(?:,[\w.-]{1,64})?\]<std(?:out|err)>:|\[rank:? {1,2}(\d{1,9})(?!\d)\](?= )"
    r"|\[GPU(\d{1,4})\](?= )|R(?:ank|ANK)\[(\d{1,9})\](?:,|:|(?= )))\s?"
)
_MPI_TAG = re.compile(r"\[\d{1,9},(?:mpirank:)?(\d{1,9})(?:,[\w.-]{1,64})?\]<std(?:out|err)>:\s?")
_TAG_WITHIN = 96
_BAR_END = re.compile(r"%\||(?:it/s|s/it)[,\]]")
# `srun -l` / `srun --label`: "3: " (task id, right-aligned when there are >= 10 tasks).
_SRUN_LABEL = re.compile(r"^ *(\d{1,5}): ")
# pdsh (DeepSpeed's multi-node launcher) prefixes every line with "<host>: ", e.g.
# "worker-0: [2022-09-08 12:02:16,517] [INFO] [launch.py:136:main] ..."
# (stas00/ml-engineering training/emulate-multi-node.md).
_HOST_LABEL = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]{0,62}): (?=\S)")

# Rank stated in the text of a line. Each alternative names one real form:
#   [Rank 0]  DeepSpeed log_dist          rank=0  DeepSpeed timers / many scripts
#   RANK: 0   generic                     [RANK:4]  `[PID:6552] [RANK:4]` loggers
#   Process (global: 2, local 2)          open_clip / EVA distributed init
#   Rank 3: Completed store-based barrier torch c10d
#   for rank: 2                           torch c10d `Added key: ... to store for rank: 2`
#   Rank: 3 partition count               DeepSpeed ZeRO stage 1/2 init
_MEMBERSHIP_FORMS = (
    r"\[Rank (\d{1,9})(?!\d)\]"
    r"|\[RANK:? ?(\d{1,9})(?!\d)\]"
    r"|^Rank: (\d{1,9})(?!\d); "  # VISSL's log hooks: `Rank: 0; [ep: 0] iter: 57; ...`
    r"|Process \(global: (\d{1,9})(?!\d), local \d+\)"
    r"|\bRank (\d{1,9})(?!\d): Completed store-based barrier"
    r"|\bfor rank: (\d{1,9})(?!\d)\b"
    r"|^Rank: (\d{1,9})(?!\d) partition count"
    # torchrun ChildFailedError block: "  rank      : 1 (local_rank: 1)"
    r"|^\s*rank\s+: (\d{1,9})(?!\d) \(local_rank: \d+\)"
)
_TEXT = re.compile(_MEMBERSHIP_FORMS + r"|\brank=(\d{1,9})(?!\d)\b|\bRANK: ?(\d{1,9})(?!\d)\b")
# Forms that say a rank exists (noted for `summary` even when nothing is parsed from the
# line); `rank=` alone is not one: "LoRA rank=64" is a hyperparameter.
_MEMBERSHIP = re.compile(_MEMBERSHIP_FORMS)
# Substrings one of which a line must contain to be worth the `_TEXT` regex (public: the
# runner's bulk path keeps lines containing these, or MEMBERSHIP_HINTS, on the line-by-line path).
TEXT_HINTS = ("ank", "RANK", "(global: ")
# Each `_MEMBERSHIP_FORMS` alternative contains one of these (keep them in step): `rank=0` on
# every DeepSpeed timer line then costs a few substring tests, not a regex search.
MEMBERSHIP_HINTS = ("Rank", "RANK:", "[RANK ", "(global: ", "for rank: ", "(local_rank: ")

# Rank in a path: rank3.log, rank_3, node1_rank7.out, DeepSpeed --enable_each_rank_log
# `<dir>/<YYYYmmddHHMMSS>_rank<N>.log` (deepspeed/launcher/launch.py), torchrun
# --log-dir `<dir>/<run-id>/attempt_<k>/<local_rank>/{stdout,stderr}.log`.
_PATH_TORCHRUN = re.compile(r"attempt_(\d{1,9})(?!\d)/(\d{1,9})(?!\d)/std(?:out|err)\.log$")
_PATH_RANK = re.compile(r"(?:^|[^a-z])rank[_-]?(\d{1,9})(?!\d)(?:\D|$)", re.I)
_PATH_HOST = re.compile(r"(?:^|/)([A-Za-z][A-Za-z0-9-]*?)[_-]rank[_-]?\d+[^/]*$", re.I)

# A launcher starting (again): seen a second time in one source, a new launch began.
#   torchrun:  "...torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment variable"
#              (older: "WARNING:torch.distributed.run:" then the banner on the next lines)
#   DeepSpeed: "[launch.py:136:main] WORLD INFO DICT: {...}"  (once per node)
_LAUNCH_BANNER = re.compile(
    r"Setting OMP_NUM_THREADS environment variable for each process"
    r"|\[launch\.py:\d+:main\] WORLD INFO DICT:"
)
# A worker group failed; if progress follows, the launcher restarted it.
#   "E1122 04:24:12.362000 8518 torch/distributed/elastic/multiprocessing/api.py:1002] failed
#    (exitcode: -6) local_rank: 0 (pid: 8520) of binary: ..."   (torch 2.13, this repo's samples)
#   "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0"
#   "[default] Worker group FAILED. 1/1 attempts left; will restart worker group" (LOGLEVEL=INFO)
_WORKER_FAILURE = re.compile(
    r"elastic[./]multiprocessing[./]api.*\bfailed \(exitcode: -?\d+\) local_rank: \d+"
    r"|Worker group FAILED\. \d+/\d+ attempts left; will restart worker group"
)


def split_prefix(text: str) -> tuple[int | None, str]:
    """`[rank3]:` / `[default3]:` -> (3, rest).

    Nested prefixes are all stripped: torchrun --tee puts `[default3]:` before PyTorch's
    `[rank3]: Traceback ...`. The global `[rankN]` wins over tee's local `[defaultN]`."""
    rank: int | None = None
    for _ in range(3):
        m = _PREFIX.match(text)
        if not m and text.find(">:", 0, _TAG_WITHIN) > 0:
            # OpenMPI's tag behind a platform's own stamp (Spell: `May 18, 2020, 11:47:13: running: [1,1]<stdout>:`)
            m = _MPI_TAG.search(text, 0, _TAG_WITHIN)
            if m is not None and _BAR_END.search(text, 0, m.start()):
                m = None  # (a tag glued after a tqdm bar is the next line's, not this one's prefix)
        if not m:
            break
        found = int(next(g for g in m.groups() if g))
        if rank is None or not text.startswith("[default"):
            rank = found
        text = text[m.end() :]
    return rank, text


def split_srun_label(text: str) -> tuple[int | None, str]:
    """`3: rest` -> (3, rest). Only meaningful once the source is known to be labelled."""
    m = _SRUN_LABEL.match(text)
    if m:
        return int(m.group(1)), text[m.end() :]
    return None, text


def split_host(text: str) -> tuple[str | None, str]:
    """`worker-0: rest` -> ("worker-0", rest). Only once the source is known to use it."""
    m = _HOST_LABEL.match(text)
    if m:
        return m.group(1), text[m.end() :]
    return None, text


def looks_srun_labelled(text: str) -> bool:
    return _SRUN_LABEL.match(text) is not None


def host_label(text: str) -> str | None:
    m = _HOST_LABEL.match(text)
    return m.group(1) if m else None


def _may_name_a_rank(text: str) -> bool:
    """Every hint of TEXT_HINTS and MEMBERSHIP_HINTS holds one of these: three substring tests
    rule out most lines (a generator over the hints cost as much as the line's parse)."""
    return "ank" in text or "ANK" in text or "(global: " in text


def text_rank(text: str) -> int | None:
    if not _may_name_a_rank(text) or not any(h in text for h in TEXT_HINTS):
        return None
    m = _TEXT.search(text)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def mentioned_rank(text: str) -> int | None:
    """A rank a world-membership line names (barrier, init, failure summary lines)."""
    if not _may_name_a_rank(text) or not any(h in text for h in MEMBERSHIP_HINTS):
        return None
    m = _MEMBERSHIP.search(text)
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def path_rank(path: str) -> int | None:
    normalized = path.replace("\\", "/")
    m = _PATH_TORCHRUN.search(normalized)
    if m:
        return int(m.group(2))
    m = _PATH_RANK.search(normalized.rsplit("/", 1)[-1]) or _PATH_RANK.search(normalized)
    if m:
        return int(m.group(1))
    return None


def path_attempt(path: str) -> int | None:
    """The torchrun restart attempt a `--log-dir` file belongs to (`attempt_1/...`)."""
    m = _PATH_TORCHRUN.search(path.replace("\\", "/"))
    return int(m.group(1)) if m else None


def path_host(path: str) -> str | None:
    """`node1_rank7.out` -> "node1": per-node prefixes that tell equal ranks apart."""
    m = _PATH_HOST.search(path.replace("\\", "/"))
    return m.group(1) if m else None


def is_launch_banner(text: str) -> bool:
    return _LAUNCH_BANNER.search(text) is not None


def is_worker_failure(text: str) -> bool:
    return _WORKER_FAILURE.search(text) is not None
