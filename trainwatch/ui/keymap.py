"""The user's key remapping: a `[keymap]` table in trainwatch.toml, `action id = "key"`.

    [keymap]
    "tab.log" = "L"            # ids are listed in the README and the help screen's source
    "chart.zoom" = "Z,ctrl+z"  # alternatives separated by commas

Read from the same file as the user patterns (`--patterns FILE`, `$TRAINWATCH_CONFIG`, else
`./trainwatch.toml`). A bad entry is left out with a one-line reason and the rest applies: a typo
in a key must not keep the dashboard from opening.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainwatch.parsers.formats.user_patterns import config_path
from trainwatch.ui.actions import Action, keys_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# One key: a printable character, or a name (`f5`, `escape`, `left_square_bracket`) with modifiers.
KEY = re.compile(r"^(?:(?:ctrl|shift|alt|super|meta|hyper)\+)*(?:[^\s,+]|[a-z][a-z0-9_]*)$")


def parse_keymap(table: Any, where: str, ids: Collection[str]) -> tuple[dict[str, str], list[str]]:
    """The valid entries of a `[keymap]` table, and why each other one was left out."""
    if not isinstance(table, Mapping):
        return {}, [f"{where}: `keymap` must be a table ([keymap])"]
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for action_id, keys in table.items():
        if action_id not in ids:
            problems.append(f"{where}: [keymap] {action_id!r} is no action (see the README's key table for the ids)")
        elif not isinstance(keys, str) or not keys.strip():
            problems.append(f'{where}: [keymap] {action_id!r} needs a key string, like "L" or "ctrl+l"')
        elif bad := [k for k in keys.split(",") if not KEY.match(k.strip())]:
            problems.append(f"{where}: [keymap] {action_id!r}: {bad[0].strip()!r} is not a key")
        else:
            keymap[action_id] = ",".join(k.strip() for k in keys.split(","))
    return keymap, problems


def load_keymap(ids: Collection[str], path: str | Path | None = None) -> tuple[dict[str, str], list[str]]:
    """The `[keymap]` of the config file in effect (or `path`) for the actions `ids`: (keymap, problems)."""
    path = path if path is not None else config_path()
    if path is None:
        return {}, []
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}, []  # no file: the default keys (a missing --patterns file is the CLI's error)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, [f"{path}: keymap not read: {exc}"]
    if "keymap" not in data:
        return {}, []
    return parse_keymap(data["keymap"], str(path), ids)


def clashes(table: Sequence[Action], keymap: Mapping[str, str]) -> list[str]:
    """Remapped keys another action of the same widget had: that action loses its key (Textual
    binds the remapped one), which the user should hear of."""
    told: list[str] = []
    for a in table:
        if a.id not in keymap:
            continue
        for key in keymap[a.id].split(","):
            for other in table:
                if other is not a and other.owner == a.owner and key in keys_of(other, keymap).split(","):
                    told.append(f"[keymap] {a.id!r} = {key!r} takes the key of {other.id!r}")
    return told
