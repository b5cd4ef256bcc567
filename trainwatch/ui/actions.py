"""Every key of the dashboard, once: one table generates the bindings (each with an id a
`[keymap]` can rebind), the help screen, the command palette's entries and the footer.

A row's `owner` says which class binds it: `app` (everywhere), `events`, `log`, `phases`,
`profiler` (the widgets whose keys they are: their `BINDINGS = bindings("log")`...).
Help rows: consecutive actions with the same `where` and `help` share one row, their keys
joined by the first one's `joiner`. The README's table of ids was generated from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from textual.binding import Binding, BindingType
from textual.keys import format_key

# How keys read in the help (Textual's own names where they read well: `?`, `+`, `[`).
KEY_NAMES = {"enter": "enter", "escape": "esc", "ctrl+p": "ctrl+p"}


@dataclass(frozen=True)
class Action:
    id: str  # the binding id, what `[keymap]` names
    key: str  # Textual key string, alternatives separated by commas
    action: str  # the Textual action it runs
    label: str  # the footer's word for it
    where: str  # the help screen's section
    help: str | None  # the help row's text (None: not in the help)
    owner: str = "app"  # the class that binds it
    show: bool = True  # in the footer
    priority: bool = False
    palette: tuple[str, str] | None = None  # (title, description) in the command palette
    joiner: str = " / "  # between the keys of actions that share a help row


ACTIONS: tuple[Action, ...] = (
    Action("quit", "q", "quit", "Quit", "everywhere", "quit"),
    Action("help", "question_mark", "help", "Help", "everywhere", "this help", palette=("Help: keys", "Every key binding")),
    Action("command_palette", "ctrl+p", "command_palette", "palette", "everywhere", "command palette (every action)",
           show=False, priority=True),
    Action("chart.smooth_more", "plus,equals_sign", "smoothing(1)", "Smooth+", "charts", "more / less EMA smoothing of loss",
           palette=("More smoothing", "Raise the loss EMA weight")),
    Action("chart.smooth_less", "minus", "smoothing(-1)", "Smooth-", "charts", "more / less EMA smoothing of loss",
           palette=("Less smoothing", "Lower the loss EMA weight")),
    Action("chart.log_y", "l", "log_scale", "Log y", "charts", "log scale on the y axis",
           palette=("Toggle log scale", "Log / linear y axis")),
    Action("chart.x_axis", "x", "x_axis", "Step/time", "charts", "x axis: step / wall time",
           palette=("Toggle x axis", "Step / wall time")),
    Action("chart.zoom", "z", "zoom", "Zoom", "charts", "zoom: last 200 / 1000 / 10000 points / all",
           palette=("Zoom", "Last 200 / 1000 / 10000 points / all")),
    Action("chart.metrics", "m", "pick_metrics", "Metrics", "charts", "pick the metrics to chart",
           palette=("Pick metrics", "Choose the charted metrics")),
    Action("events.open", "enter", "select_cursor", "Open", "events", "open the raw log at the event's line",
           owner="events", show=False),
    Action("log.search", "slash", "search", "Search", "log", "search", owner="log",
           palette=("Log: search", "Search the raw log")),
    Action("log.regex", "R", "toggle_regex", "Regex", "log", "search: regex / case-sensitive on or off", owner="log",
           show=False, palette=("Log: search regex on/off", "Search with a regular expression or plain text")),
    Action("log.case", "C", "toggle_case", "Case", "log", "search: regex / case-sensitive on or off", owner="log",
           show=False, palette=("Log: search case on/off", "Search case-sensitive or not")),
    Action("log.next_match", "n", "next_match", "Next match", "log", "next / previous match", owner="log", show=False),
    Action("log.prev_match", "N", "prev_match", "Prev match", "log", "next / previous match", owner="log", show=False),
    Action("log.filter", "f", "filter", "Filter", "log", "filter lines", owner="log",
           palette=("Log: filter", "Filter the raw log")),
    Action("log.prev_source", "left_square_bracket", "source(-1)", "Prev source", "log", "previous / next source",
           owner="log", show=False, joiner=" "),
    Action("log.next_source", "right_square_bracket", "source(1)", "Next source", "log", "previous / next source",
           owner="log", show=False, palette=("Log: next source", "Show the next source")),
    Action("log.merged", "M", "merged", "Merged", "log", "merged view: all files of the run by timestamp / one source",
           owner="log", palette=("Log: merged view", "All files of the run interleaved by timestamp, labelled")),
    Action("log.follow", "G,end", "follow", "Follow", "log", "follow the end again", owner="log", priority=True,
           palette=("Log: follow", "Follow the end of the log")),
    Action("log.clear", "escape", "clear", "Clear", "log", "clear search and filter, cancel a scan", owner="log",
           show=False),
    Action("log.home", "g,home", "home", "Line 1", "log", "go to line 1 of the file", owner="log", priority=True,
           show=False, palette=("Log: line 1", "Go to the first line of the file")),
    Action("log.next_event", "e", "event(1)", "Next event", "log", "next / previous error, warning or event line",
           owner="log", show=False),
    Action("log.prev_event", "E", "event(-1)", "Prev event", "log", "next / previous error, warning or event line",
           owner="log", show=False),
    Action("phases.prev_rank", "left_square_bracket", "rank(-1)", "Prev rank", "phases", "previous / next rank",
           owner="phases", joiner=" "),
    Action("phases.next_rank", "right_square_bracket", "rank(1)", "Next rank", "phases", "previous / next rank",
           owner="phases"),
    Action("phases.seconds", "a", "seconds", "Share/seconds", "phases", "share of the step / seconds per step",
           owner="phases"),
    Action("profiler.sort", "o", "sort_next", "Sort", "profiler", "sort by the next column (or click a header)",
           owner="profiler"),
)  # fmt: skip


def with_tabs(tabs: Sequence[str], table: Sequence[Action] = ACTIONS) -> tuple[Action, ...]:
    """The table with a `tab.<name>` action per tab (keys 1, 2, ...), after the global keys:
    the dashboard's tab list is the one place a tab is declared."""
    shown = " · ".join(tabs)
    switch = tuple(
        Action(f"tab.{name}", str(number), f"tab('{name}')", name.capitalize(), "everywhere", shown, show=False,
               palette=(f"Show {name}", f"Switch to the {name} tab"), joiner=" ")
        for number, name in enumerate(tabs, start=1)
    )  # fmt: skip
    split = next((i for i, a in enumerate(table) if a.where != "everywhere"), len(table))
    return (*table[:split], *switch, *table[split:])


def bindings(owner: str, table: Sequence[Action] = ACTIONS) -> list[BindingType]:
    """The `BINDINGS` of the class that owns these actions, each with its id."""
    return [
        Binding(a.key, a.action, a.label, show=a.show, priority=a.priority, id=a.id) for a in table if a.owner == owner
    ]


def key_label(keys: str) -> str:
    """`plus,equals_sign` -> `+ / =`: how a binding's keys read in the help and the palette."""
    return " / ".join(KEY_NAMES.get(k.strip(), format_key(k.strip())) for k in keys.split(","))


def keys_of(action: Action, keymap: Mapping[str, str]) -> str:
    """The keys in effect: the user's `[keymap]` entry, else the default."""
    return keymap.get(action.id, action.key)


def help_rows(table: Sequence[Action], keymap: Mapping[str, str]) -> Iterator[tuple[str, str, str]]:
    """(where, keys, what) per help row, with the keys in effect."""
    row: tuple[str, str, str] | None = None
    joiner = " / "
    for a in table:
        if a.help is None:
            continue
        keys = key_label(keys_of(a, keymap))
        if row is not None and (row[0], row[2]) == (a.where, a.help):
            row = (row[0], row[1] + joiner + keys, row[2])
            continue
        if row is not None:
            yield row
        row, joiner = (a.where, keys, a.help), a.joiner
    if row is not None:
        yield row


def palette_entries(table: Sequence[Action], keymap: Mapping[str, str]) -> Iterator[tuple[Action, str, str]]:
    """(action, title, description with its keys) for every action the palette offers."""
    for a in table:
        if a.palette is not None:
            title, what = a.palette
            yield a, title, f"{what} (key {key_label(keys_of(a, keymap))})"
