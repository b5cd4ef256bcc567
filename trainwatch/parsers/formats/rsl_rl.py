"""rsl_rl's iteration box (legged_gym, Isaac Lab, Genesis, unitree_rl_gym and other robot-learning repos):

    ################################################################################
                         Learning iteration 29782/50000
                           Computation: 79754 steps/s (collection: 1.118s, learning 0.114s)
              Mean value_function loss: inf
                   Mean surrogate loss: 0.0000
                           Mean reward: 38.28
    --------------------------------------------------------------------------------
                       Total timesteps: 98304
                        Iteration time: 1.18s

The learning iteration is the step (of its total); each `label: value` line under it is one of its
figures (the runner joins them into one record). `steps/s` counts environment steps, not
iterations: it is `env_steps_per_s`; the iteration's time is `Iteration time` (collection plus
learning). PPO prints two losses and no single one: `value_loss` and `surrogate_loss`; an inf or
NaN in the value loss is a `nan` event (`value_loss` is watched like a loss here).
"""

from __future__ import annotations

import math
import re

from trainwatch.lines.assembler import Line
from trainwatch.names import snake
from trainwatch.numbers import parse_eta_s, parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEADER = re.compile(r"^\s*Learning iteration (?P<n>\d{1,12})/(?P<of>\d{1,12})\s*$")
_FIELD = re.compile(
    r"^\s*(?P<label>[A-Za-z][\w /.-]{0,80}?):\s+(?:(?P<clock>\d{1,4}:[0-5]\d:[0-5]\d(?:\.\d+)?)\b"
    r"|(?P<value>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))(?P<unit>s|%| steps/s)?\b)(?P<rest>.*)$"
)
_RULE = re.compile(r"^\s*(?:#{20,}|-{20,})\s*$")
_NAMES = {
    "mean_value_function_loss": "value_loss",
    "value_function_loss": "value_loss",
    "mean_surrogate_loss": "surrogate_loss",
    "surrogate_loss": "surrogate_loss",
    "mean_entropy_loss": "entropy_loss",
    "mean_action_noise_std": "action_noise_std",
    "mean_reward": "reward",
    "mean_total_reward": "reward",
    "mean_episode_length": "episode_length",
    "total_timesteps": "timesteps",
    "iteration_time": "step_time_s",
    "total_time": "elapsed_s",
    "time_elapsed": "elapsed_s",
    "eta": "eta_s",
    "computation": "env_steps_per_s",
}
_MAX_FIGURES = 64


class RslRlParser(Parser):
    name = "rsl_rl"
    title = "rsl_rl (legged_gym, Isaac Lab)"
    triggers = ("Learning iteration ", ": ", "####", "----")
    example = "                     Learning iteration 29782/50000"
    priority = 100
    samples = (
        Sample(  # team-re-boot/genesis_ros docs (rsl_rl PPO on Genesis' Go2)
            "################################################################################\n"
            "                        Learning iteration 0/101\n"
            "\n"
            "                    Computation: 83209 steps/s (collection: 0.861s, learning 0.320s)\n"
            "            Value function loss: 0.0125\n"
            "                    Surrogate loss: -0.0004\n"
            "                Mean total reward: 0.17\n"
            "--------------------------------------------------------------------------------\n"
            "                Total timesteps: 98304\n"
            "                    Iteration time: 1.18s\n"
            "                            ETA: 119.3s\n",
            steps=(
                (
                    0,
                    {
                        "env_steps_per_s": 83209.0,
                        "value_loss": 0.0125,
                        "surrogate_loss": -0.0004,
                        "reward": 0.17,
                        "step_time_s": 1.18,
                        "total_steps": 101,
                    },
                ),
            ),
        ),
        Sample(  # unitreerobotics/unitree_rl_lab issue #101: Isaac Lab's box, the value loss gone inf
            "################################################################################\n"
            "                     Learning iteration 29782/50000                     \n"
            "          Mean value_function loss: inf\n"
            "               Mean surrogate loss: 0.0000\n"
            "   Episode_Reward/track_lin_vel_xy: 0.8978\n",
            steps=((29782, {"surrogate_loss": 0.0, "episode_reward_track_lin_vel_xy": 0.8978}),),
            events=("nan",),
        ),
    )

    def __init__(self) -> None:
        self._iteration: int | None = None
        self._figures = 0

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._iteration is None and "Learning iteration " not in text:
            return False  # (`: ` is on most lines: outside a box, only its header is looked at)
        m = _HEADER.match(text)
        if m is not None:
            n, of = int(m.group("n")), int(m.group("of"))
            if n > of:
                return False
            self._iteration, self._figures = n, 0
            out.step(n, {"total_steps": float(of)})
            return True
        if self._iteration is None:
            return False
        if _RULE.match(text):
            return True
        m = _FIELD.match(text)
        if m is None or self._figures >= _MAX_FIGURES:
            self._iteration = None  # the box ended (`Storing git diff ...`)
            return False
        if m.group("clock") is not None:  # rsl_rl 2's `Time elapsed: 00:00:13`, `ETA: 00:28:32`
            value = parse_eta_s(m.group("clock"))
        else:
            value = parse_number(m.group("value"))
        if value is None:
            return False
        key = snake(m.group("label"))
        name = _NAMES.get(key, key)
        if name == "value_loss" and not math.isfinite(value):
            out.event("nan", "error", text.strip(), {"metric": "value_loss"}, step=self._iteration, line=line.no)
        self._figures += 1
        out.step(self._iteration, {name: value})
        return True
