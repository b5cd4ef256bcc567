"""User-defined patterns from trainwatch.toml / $TRAINWATCH_CONFIG.

The lines are the saforem2 custom loop in /work/shared/real_logs (a format a user would describe)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _feed import feed, steps

from trainwatch.parsers.formats import user_patterns
from trainwatch.parsers.formats.user_patterns import UserPatternParser, configured_patterns, load_patterns

LINE = (
    "[2023-01-11 13:28:13,846][mlprof.trainers.pytorch.trainer][INFO] - [0] [1/10: 0/1875 (0%)] "
    "epoch=1.0000 step=1.0000 dt=0.3665 batch_acc=0.1094 batch_loss=0.0090 acc=0.0149 running_loss=0.0012"
)
CONFIG = r"""
[[pattern]]
name = "mlprof"
regex = '\[(?P<rank>\d+)\] \[\d+/\d+: .*?step=(?P<step>[\d.]+) dt=(?P<step_time_s>[\d.]+) .*?batch_loss=(?P<train_loss>[\d.]+)'
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trainwatch.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_pattern_turns_a_line_into_a_step(tmp_path: Path) -> None:
    patterns = load_patterns(_write(tmp_path, CONFIG))
    (s,) = steps(feed([LINE], [UserPatternParser(patterns)]))
    assert (s.step, s.rank) == (1, 0)
    assert s.metrics == {"step_time_s": 0.3665, "loss": 0.009}
    assert s.time == "2023-01-11T13:28:13.846"


def test_env_var_and_local_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, CONFIG)
    monkeypatch.setenv(user_patterns.ENV_VAR, str(path))
    assert [p.name for p in configured_patterns()] == ["mlprof"]
    monkeypatch.delenv(user_patterns.ENV_VAR)
    monkeypatch.chdir(tmp_path)
    assert [p.name for p in UserPatternParser().patterns] == ["mlprof"]
    monkeypatch.chdir(tmp_path.parent)
    assert UserPatternParser().patterns == []


def test_trigger_lets_pattern_run_before_builtins(tmp_path: Path) -> None:
    text = CONFIG + 'trigger = "batch_loss="\n'
    parser = UserPatternParser(load_patterns(_write(tmp_path, text)))
    assert parser.triggers == ("batch_loss=",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[[pattern]]\nname = \"x\"\nregex = '(?P<loss>[\\d.]+'\n",
            "pattern 'x': bad regex: missing ), unterminated subpattern",
        ),
        ('[[pattern]]\nregex = "(?P<loss>.)"\n', "pattern #1 needs a `name`"),
        ('[[pattern]]\nname = "x"\n', "pattern 'x' needs a `regex` string"),
        ('[[pattern]]\nname = "x"\nregex = "loss=([0-9.]+)"\n', "has no named groups"),
        ('[[pattern]]\nname = "x"\nregex = "(?P<step>[0-9]+)"\n', "at least one metric group"),
        ("[[pattern]\n", "not valid TOML"),
    ],
)
def test_bad_config_gives_one_line_message(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ValueError) as info:
        load_patterns(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_config_never_crashes_the_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, '[[pattern]]\nname = "x"\nregex = "(?P<loss>["\n')
    monkeypatch.setenv(user_patterns.ENV_VAR, str(path))
    parser = UserPatternParser()
    assert parser.patterns == []
    assert "bad regex" in (user_patterns.config_error() or "")
    assert steps(feed([LINE], [parser])) == []


def test_missing_env_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(user_patterns.ENV_VAR, str(tmp_path / "nope.toml"))
    assert configured_patterns() == []
    assert "no such file" in (user_patterns.config_error() or "")
    with pytest.raises(ValueError, match="no such file"):
        load_patterns(tmp_path / "nope.toml")
