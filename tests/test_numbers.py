"""Numbers exactly as real logs print them (examples taken from the seed and real logs)."""

from __future__ import annotations

import math

import pytest

from trainwatch.names import metric_name, phase_name, snake
from trainwatch.numbers import (
    parse_duration_s,
    parse_eta_s,
    parse_mem_gib,
    parse_number,
    parse_rate,
    parse_scaled,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.825991E+00", 1.825991),  # Megatron %E
        ("1.098990E+01", 10.9899),
        ("3.2e+4", 32000.0),
        ("10,050", 10050.0),  # thousands commas (torchtitan tps)
        ("'3.41'", 3.41),  # transformers >= 4.47 string numbers
        ("65536.", 65536.0),  # open_clip `Loss Scaler: 65536.`
        ("-0.5", -0.5),
        (".5", 0.5),
    ],
)
def test_parse_number(text: str, value: float) -> None:
    assert parse_number(text) == pytest.approx(value)


def test_nan_and_inf() -> None:
    assert math.isnan(parse_number("nan") or 0.0)
    assert parse_number("inf") == math.inf
    assert parse_number("-inf") == -math.inf


@pytest.mark.parametrize("text", ["", "1.2.3", "abc", "1,2", "12ms", "1e", "--1", "1,0000"])
def test_half_numbers_are_not_numbers(text: str) -> None:
    assert parse_number(text) is None


def test_scaled_counts() -> None:
    assert parse_scaled("1.258B") == pytest.approx(1.258e9)
    assert parse_scaled("12.5K") == pytest.approx(12500)
    assert parse_scaled("42") == 42


def test_memory_in_gib() -> None:
    assert parse_mem_gib("66.91GiB(37.51%)") == pytest.approx(66.91)
    assert parse_mem_gib("5.29GB") == pytest.approx(5.29e9 / 1024**3)
    assert parse_mem_gib("3961M") == pytest.approx(3961e6 / 1024**3)
    assert parse_mem_gib("3961", default_unit="mib") == pytest.approx(3961 / 1024)
    assert parse_mem_gib("lots") is None


def test_durations_rates_and_etas() -> None:
    assert parse_duration_s("781us/step") == pytest.approx(781e-6)
    assert parse_duration_s("120.50ms") == pytest.approx(0.1205)
    assert parse_duration_s("4453.41ms") == pytest.approx(4.45341)
    assert parse_duration_s("52s") == 52
    assert parse_rate("7.03s/it") == ("s_per_it", 7.03)
    assert parse_rate("15.24it/s") == ("it_per_s", 15.24)
    assert parse_eta_s("1 day, 16:21:05") == 86400 + 16 * 3600 + 21 * 60 + 5
    assert parse_eta_s("0:24:11") == 24 * 60 + 11
    assert parse_eta_s("24:11") is None


def test_a_printed_duration_is_the_seconds_it_says() -> None:
    """`dt: 317.25ms` is 0.31725 s, as `summary --json` and `export` print it (not 0.31725000000000003),
    and the same number the DeepSpeed/Megatron timers give (`ms_to_s`)."""
    from trainwatch.numbers import ms_to_s

    for text, seconds in (("317.25ms", 0.31725), ("4453.41ms", 4.45341), ("781us", 0.000781), ("1.1min", 66.0)):
        assert parse_duration_s(text) == seconds
        assert repr(parse_duration_s(text)) == repr(seconds)
    for ms in ("317.25", "0.1", "900.0", "12345.678", "0.003"):
        assert parse_duration_s(ms + "ms") == ms_to_s(float(ms))


def test_names_follow_the_contract() -> None:
    assert snake("Loss(CLIP)") == "loss_clip"
    assert snake("consumed samples") == "consumed_samples"
    assert snake("Logit Scale") == "logit_scale"
    assert metric_name("lm loss") == "loss"
    assert metric_name("learning rate") == "lr"
    assert metric_name("Grad Norm") == "grad_norm"
    assert metric_name("Loss Scaler") == "loss_scale"
    assert metric_name("CurrSamplesPerSec") == "samples_per_s"
    assert phase_name("fwd") == "forward"
    assert phase_name("bwd_allreduce") == "backward_allreduce"
    assert phase_name("fwd_microstep") == "forward_microstep"
    assert phase_name("forward-backward") == "forward_backward"
