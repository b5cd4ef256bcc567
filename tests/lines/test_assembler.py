"""Bytes -> lines: any chunking gives the same lines; torn lines are never released early."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trainwatch.lines.assembler import _KEEP, MAX_LINE_BYTES, Kind, Line, LineAssembler

# Real lines. Megatron iteration line: /work/shared/seeds/004 (DeepSpeed + Megatron GPT-2).
MEGATRON = (
    b" iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 |"
    b" lm loss 1.098990E+01 | loss scale 4096.0 |"
)
# tqdm frame + HF dict glued after it: /work/shared/real_logs/hf_trainer__LMSYS_slice1_bar_then_buffered_dicts.log
HF_FRAME = b"  0%|          | 1/3000 [00:07<5:47:29,  6.95s/it]"
HF_DICT = b"{'loss': 1.0283, 'learning_rate': 2e-05, 'epoch': 0.0}"

PIECES = [
    b"\n",
    b"\r",
    b"\r\n",
    b"\x1b[2K",
    b"\x1b]52;c;aGk=\x07",
    b"\x00\x00",
    b"\xff\xfe",
    "é".encode(),
    "✓".encode(),
    "😀".encode(),
    b"\xf0\x9f",  # a truncated 4-byte sequence
    b"\t",
    b"\b",
    b"loss 2.345",
    MEGATRON,
    HF_FRAME,
    HF_DICT,
    b" ",
]


def run(chunks: list[bytes], final: bool = True) -> list[Line]:
    asm = LineAssembler()
    out: list[Line] = []
    for c in chunks:
        out.extend(asm.feed(c))
    out.extend(asm.finish() if final else asm.abandon())
    return out


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks, last = [], 0
    for p in points:
        chunks.append(data[last:p])
        last = p
    chunks.append(data[last:])
    return chunks


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.lists(st.integers(min_value=0), max_size=12))
def test_any_chunking_yields_the_same_lines(pieces: list[bytes], cuts: list[int]) -> None:
    data = b"".join(pieces)
    whole = run([data])
    assert run(split(data, cuts)) == whole
    assert run([bytes([b]) for b in data]) == whole
    # numbering: every LINE has a distinct consecutive number
    numbers = [ln.no for ln in whole if ln.kind is Kind.LINE]
    assert numbers == list(range(1, len(numbers) + 1))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.lists(st.integers(min_value=0), max_size=8))
def test_abandon_also_is_chunking_independent(pieces: list[bytes], cuts: list[int]) -> None:
    data = b"".join(pieces)
    assert run(split(data, cuts), final=False) == run([data], final=False)


def test_partial_line_held_until_newline() -> None:
    asm = LineAssembler()
    assert asm.feed(MEGATRON[:40]) == []
    assert asm.feed(MEGATRON[40:]) == []
    assert asm.has_partial
    lines = asm.feed(b"\n")
    assert [ln.text for ln in lines] == [MEGATRON.decode()]


def test_torn_last_line_is_not_parsed_when_abandoned() -> None:
    asm = LineAssembler()
    asm.feed(b"iter 1: loss 2.3")  # block-buffered stdout cut `loss 2.345`
    lines = asm.abandon()
    assert len(lines) == 1 and lines[0].display_only and lines[0].text == "iter 1: loss 2.3"


def test_final_line_without_newline_released_at_real_end() -> None:
    asm = LineAssembler()
    assert asm.feed(MEGATRON) == []
    lines = asm.finish()
    assert [(ln.text, ln.display_only) for ln in lines] == [(MEGATRON.decode(), False)]


def test_frames_and_record_glued_after_last_frame() -> None:
    lines = run([HF_FRAME + b"\r" + HF_FRAME.replace(b"1/3000", b"2/3000") + b"\r" + HF_DICT + b"\n"])
    assert [(ln.kind, ln.no) for ln in lines] == [(Kind.FRAME, 1), (Kind.FRAME, 1), (Kind.LINE, 1)]
    assert lines[-1].text == HF_DICT.decode() and not lines[-1].display_only


def test_line_that_is_only_a_frame_is_display_only() -> None:
    lines = run([HF_FRAME + b"\r\x1b[2K\n"])
    assert lines[0].kind is Kind.FRAME
    assert lines[1].display_only and lines[1].text == HF_FRAME.decode().strip("\r")


def test_crlf_is_a_plain_line_end_even_split_across_chunks() -> None:
    lines = run([MEGATRON + b"\r", b"\n" + MEGATRON + b"\r\n"])
    assert [(ln.kind, ln.no, ln.display_only) for ln in lines] == [(Kind.LINE, 1, False), (Kind.LINE, 2, False)]


def test_ansi_stripped_invalid_utf8_replaced_nul_dropped() -> None:
    lines = run([b"\x1b[32mok\x1b[0m \xff\x00\x00 loss 1.5\n"])
    assert lines[0].text == "ok \ufffd loss 1.5"


def test_fifty_megabyte_line_keeps_head_and_tail_in_bounded_memory() -> None:
    asm = LineAssembler()
    head, tail = b"H" * 1000, b"T" * 1000
    asm.feed(head)
    block = b"x" * (1024 * 1024)
    for _ in range(50):
        assert asm.feed(block) == []
        held = asm._segment_len + len(asm._tail) + sum(len(s) for s in asm._segment)
        assert held <= MAX_LINE_BYTES + 2 * _KEEP
    lines = asm.feed(tail + b"\n" + MEGATRON + b"\n") + asm.finish()
    assert len(lines) == 2
    assert lines[0].text.startswith("H" * 1000) and lines[0].text.endswith("T" * 1000)
    assert len(lines[0].text) < 3 * _KEEP
    assert f"{50 * 1024 * 1024 + 2000 - 2 * _KEEP} characters not kept" in lines[0].text
    assert lines[1] == Line(2, MEGATRON.decode())
    assert asm.lines_capped == 1


def test_long_line_capping_is_chunking_independent() -> None:
    data = b"a" * 70_000 + b"\r" + b"b" * 300_000 + b"\n" + b"c" * 10 + b"\n"
    whole = run([data])
    assert run([data[i : i + 4096] for i in range(0, len(data), 4096)]) == whole
    assert run([data[:69_999], data[69_999:300_000], data[300_000:]]) == whole


def test_reset_numbers_from_one_again() -> None:
    asm = LineAssembler()
    asm.feed(b"a\nb\n")
    asm.reset()
    assert asm.feed(b"c\n") == [Line(1, "c")]
