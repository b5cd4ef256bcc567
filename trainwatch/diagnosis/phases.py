"""Which printed timers split a step, and in which order a step runs through them.

DeepSpeed and Megatron print nested timers beside their parents (`backward` = `backward_inner` +
`backward_allreduce`; Megatron's `batch_generator` runs inside `forward`): every view that adds
phases up (the phase bars, the Phases tab, `summary`'s shares) takes the partition from
`partition_phases`, and every view that lists them takes the order from `STEP_ORDER`.
"""

from __future__ import annotations

from collections.abc import Iterable

# The order a step runs through its phases; a phase keeps its place (and its colour) everywhere.
STEP_ORDER = (
    "data",
    "batch_generator",
    "data_loader",
    "forward",
    "forward_backward",
    "backward",
    "allreduce",
    "comm",
    "optimizer",
    "step",
)


def phase_order(name: str) -> tuple[int, str]:
    """Sort key: known phases in step order, then the others by name."""
    return (STEP_ORDER.index(name) if name in STEP_ORDER else len(STEP_ORDER), name)


OTHER = "other"  # the part of a step no printed phase covers: no phase, drawn last


def ordered_phases(names: Iterable[str]) -> list[str]:
    """Known phases in step order, then the others as the log named them (never `other`)."""
    names = list(names)
    known = [n for n in STEP_ORDER if n in names]
    return known + [n for n in names if n not in STEP_ORDER and n != OTHER]


# Timers that are part of another timer (DeepSpeed: `backward` = inner + allreduce, its `step`
# includes the optimizer timers; Megatron: `optimizer` includes them when both print).
_CHILDREN_OF: dict[str, tuple[str, ...]] = {
    "backward_inner": ("backward",),
    "backward_allreduce": ("backward",),
    "optimizer_gradients": ("step", "optimizer"),
    "optimizer_step": ("step", "optimizer"),
    "optimizer_allgather": ("step", "optimizer"),
    # Megatron's get_batch runs inside forward_step, itself inside forward-backward
    "batch_generator": ("forward", "forward_backward"),
}


def phase_parent(name: str, present: set[str] | dict[str, float]) -> str | None:
    """The printed timer that contains `name`, if the log printed it too."""
    for parent in _CHILDREN_OF.get(name, ()):
        if parent in present:
            return parent
    return None


def phase_tree(shares: dict[str, float]) -> list[tuple[str, float, int]]:
    """(name, share, depth) with each nested timer listed right under its parent."""
    roots = [n for n in shares if phase_parent(n, shares) is None]
    out: list[tuple[str, float, int]] = []
    for root in sorted(roots, key=lambda n: -shares[n]):
        out.append((root, shares[root], 0))
        kids = [n for n in shares if phase_parent(n, shares) == root]
        out.extend((kid, shares[kid], 1) for kid in sorted(kids, key=lambda n: -shares[n]))
    return out


def partition_phases(names: list[str]) -> list[str]:
    """The printed timers that split a step without overlap: nested timers (`backward_inner`,
    `optimizer_step` under DeepSpeed's `step`, Megatron's `batch_generator` under `forward` and
    its `data_loader` under that), per-micro-step repeats and `_min` companions are left out."""
    present = set(names)
    out = []
    for n in names:
        if n.endswith(("_microstep", "_min")) or phase_parent(n, present) is not None:
            continue
        if n == "data_loader" and "batch_generator" in present:
            continue
        if n == "forward_backward" and present & {"forward", "backward"}:
            continue
        if "forward_backward" in present and n != "forward_backward" and n.startswith(("forward_", "backward_")):
            continue  # Megatron's forward-compute / backward-compute inside its forward-backward
        out.append(n)
    return out
