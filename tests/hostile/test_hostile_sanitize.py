"""Nothing a log says can act on the terminal: every line is made inert at ingest; every other
untrusted string (a file name, a message quoting one) is made `printable` on its way out.

The sequences below are the ones terminals act on (xterm ctlseqs): OSC 52 writes the
clipboard, OSC 0/2 set the window title, OSC 8 makes hyperlinks, DCS/APC/SOS/PM carry
payloads, CSI moves the cursor or clears the screen, and their 8-bit C1 forms
(U+009B CSI, U+009D OSC, U+0090 DCS, U+009C ST) do the same on terminals that honour them.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainwatch.lines.assembler import LineAssembler
from trainwatch.lines.sanitize import json_safe, printable, sanitize

# What must never leave the sanitizer: ESC, every C0 control but tab, DEL, every C1 control,
# and the bidi embeddings/overrides/isolates that reorder what a viewer sees.
FORBIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

# Pieces an attacker strings together: introducers, terminators, parameters, payload text.
_PIECES = st.sampled_from(
    [
        "\x1b",
        "\x1b]",
        "\x1b[",
        "\x1bP",
        "\x1b_",
        "\x1b^",
        "\x1bX",
        "\x1b\\",
        "\x07",
        "\x9b",
        "\x9d",
        "\x90",
        "\x9c",
        "\x9e",
        "\x9f",
        "52;c;",
        "0;",
        "2;",
        "8;;",
        "31m",
        "2J",
        "10;20H",
        "?1049h",
        "aGVsbG8=",
        "pwned",
        "\b",
        "\r",
        "\t",
        "\x00",
        "\x7f",
        "\u202e",
        "\u2066",
        "loss 2.5",
        " ",
        "[/]",
        "[@click=app.quit]",
    ]
)


@given(st.text())
@settings(max_examples=400, deadline=None)
def test_any_text_comes_out_without_controls(text: str) -> None:
    assert FORBIDDEN.search(sanitize(text)) is None


@given(st.lists(_PIECES | st.text(max_size=4), max_size=30).map("".join))
@settings(max_examples=600, deadline=None)
def test_escape_sequence_soup_comes_out_without_controls(text: str) -> None:
    out = sanitize(text)
    assert FORBIDDEN.search(out) is None
    assert sanitize(out) == out  # inert text stays as it is


_PRINTABLE = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters=BIDI) | st.just("\t"),
)


@given(_PRINTABLE)
@settings(max_examples=400, deadline=None)
def test_printable_text_passes_unchanged(text: str) -> None:
    assert sanitize(text) == text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # OSC 52 clipboard write, BEL- and ST-terminated
        ("iteration 10 \x1b]52;c;aGVsbG8=\x07| lm loss 2.5", "iteration 10 | lm loss 2.5"),
        ("iteration 10 \x1b]52;c;aGVsbG8=\x1b\\| lm loss 2.5", "iteration 10 | lm loss 2.5"),
        # window title change (OSC 0 and OSC 2)
        ("\x1b]0;pwned\x07step 1", "step 1"),
        ("\x1b]2;pwned\x1b\\step 1", "step 1"),
        # 8-bit CSI and OSC (C1 controls)
        ("x\x9b31mred", "xred"),
        ("x\x9d0;pwned\x9cy", "xy"),
        ("x\x9d52;c;aGVsbG8=\x07y", "xy"),
        # DCS (XTGETTCAP query), APC, SOS, PM; 7- and 8-bit
        ("\x1bP+q544e\x1b\\ok", "ok"),
        ("\x90+q544e\x9cok", "ok"),
        ("\x1b_payload\x1b\\ok", "ok"),
        ("\x1bXpayload\x9cok", "ok"),
        ("\x1b^payload\x07ok", "ok"),
        # OSC 8 hyperlink: the link text stays, the target goes
        ("\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07", "link"),
        # unterminated OSC at the end of what arrived: stripped to the end
        ("iter 5 \x1b]52;c;aGVsbG8=", "iter 5 "),
        ("iter 5 \x9d0;pwn", "iter 5 "),
        # cursor moves, clear screen, alternate screen, SGR colours
        ("\x1b[2J\x1b[H\x1b[10;20Hhi", "hi"),
        ("\x1b[?1049h\x1b[A\x1b[2Kbar", "bar"),
        ("\x1b[1;31mloss\x1b[0m 2.0", "loss 2.0"),
        ("\x1b[38;5;196mred\x1b[39m", "red"),
        # Keras-style backspace overstrike, as a terminal would show it
        ("loss: 0.5\b\b\b0.4", "loss: 0.4"),
        ("abc\b\b\b\b\bX", "Xbc"),
        # bidi override (Trojan Source), NUL, DEL, NEL
        ("file\u202egnp.exe", "filegnp.exe"),
        ("a\x00b\x7fc\x85d", "abcd"),
        # an OSC whose body holds a CSI: the payload text becomes inert visible text
        ("a\x1b]0;\x1b[31mpwned\x07b", "apwnedb"),
    ],
)
def test_concrete_sequences(raw: str, expected: str) -> None:
    assert sanitize(raw) == expected


def test_tab_kept() -> None:
    assert sanitize("a\tb\x1b[0m") == "a\tb"


@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=6))
@settings(max_examples=300, deadline=None)
def test_assembled_lines_are_inert_for_any_bytes_and_chunking(data: bytes, cuts: list[int]) -> None:
    """An escape sequence split across read chunks is still removed: lines are sanitized whole."""
    asm = LineAssembler()
    lines = []
    last = 0
    for cut in sorted(c for c in cuts if c <= len(data)):
        lines += asm.feed(data[last:cut])
        last = cut
    lines += asm.feed(data[last:])
    lines += asm.finish()
    for line in lines:
        assert FORBIDDEN.search(line.text) is None, line


def test_osc52_split_across_chunks_is_removed() -> None:
    asm = LineAssembler()
    raw = b"iteration 1 | lm loss 2.0 \x1b]52;c;aGVsbG8=\x07|\n"
    out = []
    for i in range(len(raw)):
        out += asm.feed(raw[i : i + 1])
    assert [line.text for line in out] == ["iteration 1 | lm loss 2.0 |"]


# ------------------------------------------------------------- printable: names and messages
# The gate for every untrusted string other than a log line: nothing is dropped, every unsafe
# character is shown. Lone surrogates are how Python holds a file name's undecodable bytes.
_ANY = st.text(alphabet=st.characters(blacklist_categories=())) | st.text(
    alphabet=st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF) | st.sampled_from(["\x1b", "\x9b", "\u202e"])
)


@given(_ANY)
@settings(max_examples=400, deadline=None)
def test_printable_leaves_no_control_and_can_be_written_as_utf8(text: str) -> None:
    out = printable(text)
    assert FORBIDDEN.search(out) is None
    out.encode("utf-8")  # no lone surrogate left: it would be written back as the raw byte


@given(_PRINTABLE)
@settings(max_examples=200, deadline=None)
def test_printable_keeps_printable_text(text: str) -> None:
    assert printable(text) == text


# Without the stand-ins' own characters (backslash, the control pictures) in the input, two
# different names are never shown alike.
_NAMES = st.text(
    alphabet=st.characters(
        blacklist_characters="\\" + "".join(map(chr, range(0x2400, 0x2422))), blacklist_categories=()
    )
)


@given(_NAMES, _NAMES)
@settings(max_examples=300, deadline=None)
def test_two_names_are_never_shown_alike(a: str, b: str) -> None:
    if a != b:
        assert printable(a) != printable(b)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]52;c;cHduZWQ=\x07x.log", "␛]52;c;cHduZWQ=␇x.log"),  # OSC 52 clipboard write
        ("\x1b]0;T\x07y.log", "␛]0;T␇y.log"),  # title change
        ("\x1b[2J\x1b[10;20Hz.log", "␛[2J␛[10;20Hz.log"),  # clear screen, cursor move
        ("\x9b31m\x9d0;T\x9c.log", "\\x9b31m\\x9d0;T\\x9c.log"),  # 8-bit CSI, OSC, ST
        ("file\u202egol.exe", "file\\u202egol.exe"),  # bidi override
        ("a\nb\rc\x00d\x7fe", "a␊b␍c␀d␡e"),  # a second line faked in a message, NUL, DEL
        ("\udc9b31m.log", "\\x9b31m.log"),  # raw byte 0x9b in a name (not UTF-8)
        ("[bold red]x[/] [link=evil.example]", "[bold red]x[/] [link=evil.example]"),  # markup: a Text matter
        ("tab\there", "tab\there"),
    ],
)
def test_printable_shows_what_it_replaces(raw: str, shown: str) -> None:
    assert printable(raw) == shown


@given(_ANY)
@settings(max_examples=300, deadline=None)
def test_json_safe_is_the_same_data_without_a_raw_control(text: str) -> None:
    data = {"source": text, "lines": [text, 1]}
    for indent in (None, 2):
        encoded = json_safe(json.dumps(data, ensure_ascii=False, indent=indent))
        assert FORBIDDEN.search(encoded.replace("\n", "")) is None
        encoded.encode("utf-8")
        assert json.loads(encoded) == data
