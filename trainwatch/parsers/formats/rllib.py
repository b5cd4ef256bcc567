"""Ray RLlib / Tune training results: the result dict of one `train()` call as YAML, one field a line.

    Result for PPO_CartPole-v0_120b5_00000:          (Tune, verbose=3; pretty_print() has no header)
      episode_reward_mean: 22.577142857142857
      info:
        learner:
          default_policy:
            learner_stats:
              cur_lr: 4.999999873689376e-05
              total_loss: 8.862993240356445
      training_iteration: 1

`pretty_print` sorts the keys, so a headerless result starts with `agent_timesteps_total`,
`counters` or `custom_metrics` at the left margin. The block ends at a blank line or a line that
is not part of the YAML. The step is `training_iteration` (one `train()` call) where the block has
it. Only what a person reads as progress is kept: the learner's `total_loss` (loss), `cur_lr` (lr),
`grad_gnorm` and its other losses (the first policy's), the episode reward and length means and
`time_this_iter_s` (the step time); counters, dates, hosts, IPs and the config are not metrics.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.timestamps import line_time

_HEADER = re.compile(r"^Result for \S+:\s*$")
_FIRST_KEY = re.compile(r"^(?:agent_timesteps_total|counters|custom_metrics):")
_FIELD = re.compile(r"^(?P<indent> *)(?P<key>[\w./-]+):(?: (?P<value>.*?))?\s*$")
_NAMES = {
    "total_loss": "loss",
    "cur_lr": "lr",
    "grad_gnorm": "grad_norm",
    "policy_loss": "policy_loss",
    "vf_loss": "vf_loss",
    "entropy": "entropy",
    "kl": "kl",
    "episode_reward_mean": "episode_reward_mean",
    "episode_reward_max": "episode_reward_max",
    "episode_reward_min": "episode_reward_min",
    "episode_len_mean": "episode_len_mean",
    "time_this_iter_s": "step_time_s",
}
_MAX_LINES = 2000  # a result with its config is a few hundred lines


class RLlibParser(Parser):
    name = "rllib"
    title = "Ray RLlib / Tune results"
    triggers = ()  # the block's lines are plain `key: value` YAML
    example = "Result for PPO_CartPole-v0_120b5_00000:\n  episode_reward_mean: 22.58\n  training_iteration: 1"
    samples = (
        Sample(
            "Result for PPO_CartPole-v0_120b5_00000:\n"
            "  agent_timesteps_total: 8000\n"
            "  date: 2022-07-27_15-41-06\n"
            "  episode_reward_mean: 41.2\n"
            "  info:\n"
            "    learner:\n"
            "      default_policy:\n"
            "        learner_stats:\n"
            "          cur_lr: 4.999999873689376e-05\n"
            "          total_loss: 7.5\n"
            "  node_ip: 127.0.0.1\n"
            "  time_this_iter_s: 2.5\n"
            "  training_iteration: 2\n",
            steps=((2, {"loss": 7.5, "lr": 4.999999873689376e-05, "episode_reward_mean": 41.2, "step_time_s": 2.5}),),
        ),
    )
    priority = 100

    def __init__(self) -> None:
        self._metrics: dict[str, float] | None = None
        self._step: int | None = None
        self._line = 0
        self._time: str | None = None
        self._lines = 0
        self._config_indent: int | None = None  # inside `config:`: hyperparameters, not results

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if self._metrics is not None:
            if self._continues(text):
                return True
            self._emit(out)
        if _HEADER.match(text) or _FIRST_KEY.match(text):
            self._metrics, self._step, self._lines, self._config_indent = {}, None, 0, None
            self._line, self._time = line.no, line_time(text)
            if not _HEADER.match(text):
                self._continues(text)
            return True
        return False

    def finish(self, out: Emitter) -> None:
        self._emit(out)

    def _continues(self, text: str) -> bool:
        """Whether the line belongs to the result (and read its field)."""
        assert self._metrics is not None
        self._lines += 1
        if not text.strip() or self._lines > _MAX_LINES:
            return False
        m = _FIELD.match(text)
        if m is None:
            # a wrapped flow list (`episode_reward: [63.0, 12.0,` then `  24.0]`) or a `- 21` item
            return text.startswith(" ") or text.startswith("- ")
        indent, key, value = len(m.group("indent")), m.group("key"), m.group("value")
        if self._config_indent is not None and indent <= self._config_indent:
            self._config_indent = None
        if key == "config":
            self._config_indent = indent
        if self._config_indent is not None or not value:
            return True
        if key == "training_iteration":
            number = parse_number(value)
            if number is not None and number.is_integer():
                self._step = int(number)
        name = _NAMES.get(key)
        if name is not None and name not in self._metrics:  # the first policy's stats
            number = parse_number(value)
            if number is not None:
                self._metrics[name] = number
        return True

    def _emit(self, out: Emitter) -> None:
        metrics, self._metrics = self._metrics, None
        if metrics:
            out.step(self._step, metrics, time=self._time, line=self._line)
