"""Command line: `trainwatch PATH...` (`open`: the dashboard), summary, compare, export, check, watch, demo, formats, serve.

Exit codes: 0 ok; 1 `check` found the run stalled, crashed or producing NaN; 2 usage error
(missing file, unknown option); 3 `check` recognised no training step (status unknown). No command prints a Python traceback unless `--debug`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from trainwatch import __version__
from trainwatch.lines.sanitize import json_safe, printable
from trainwatch.pipeline import Pipeline
from trainwatch.sources.problems import ProblemKind
from trainwatch.stderr import warn
from trainwatch.views.export import FORMATS, CsvWriter, JsonlWriter
from trainwatch.views.hooks import TIMEOUT_S
from trainwatch.views.watch_options import EVERY_S, SETTLE_S, WatchOptions

EXIT_USAGE = 2


class DefaultGroup(click.Group):
    """`trainwatch PATH...` means `trainwatch open PATH...` (the dashboard). Click's own errors quote what the
    user passed (`-o DIR`: "'DIR' is a directory"), which may be a hostile name that tab
    completion filled in: their message is made `printable` before Click prints it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help", "--version", "--debug"):
            args = ["open", *args]
        elif len(args) > 1 and args[0] == "--debug" and args[1] not in self.commands:
            args = ["--debug", "open", *args[1:]]
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            raise _printable_error(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:  # a subcommand's options and arguments
            raise _printable_error(exc) from None


def _printable_error(exc: click.ClickException) -> click.ClickException:
    """The same error, its message `printable` (Click shows it with its usage line and hint)."""
    exc.message = printable(exc.message)  # type: ignore[misc]  # Final in Click's stubs; set once here
    return exc


F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str) -> None:
    warn(message)
    sys.exit(EXIT_USAGE)


def _use_patterns(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Load user patterns before any pipeline starts; a bad file is a one-line error."""
    from trainwatch.parsers.formats.user_patterns import ENV_VAR, config_path, load_patterns

    if value:
        os.environ[ENV_VAR] = value
        try:
            load_patterns(value)
        except ValueError as exc:
            _fail(str(exc))
        return value
    implicit = config_path()
    if implicit is not None:
        try:
            load_patterns(implicit)
        except ValueError as exc:
            warn(f"ignoring user patterns: {exc}")
    return value


def patterns_option(func: F) -> F:
    return click.option(
        "--patterns",
        type=click.Path(dir_okay=False),
        callback=_use_patterns,
        expose_value=False,
        is_eager=True,
        help="TOML file of named-group regexes for your own log format (default: ./trainwatch.toml).",
    )(func)


def labels_option(func: F) -> F:
    return click.option(
        "--label",
        "labels",
        metavar="NAME",
        multiple=True,
        help="Name of a stream PATH (a FIFO, `<(ssh node1 tail -F out.log)`), in the order of the"
        " streams; repeat for each (default: stream 1, stream 2...).",
    )(func)


def _pipeline(paths: tuple[str, ...], labels: tuple[str, ...], **options: Any) -> Pipeline:
    """A pipeline over PATHS; labels that do not fit the stream PATHs are a usage error."""
    try:
        return Pipeline(list(paths), labels=labels, **options)
    except ValueError as exc:
        _fail(str(exc))
        raise  # (not reached: _fail exits)


def _pipeline_for_reading(paths: tuple[str, ...], labels: tuple[str, ...]) -> Pipeline:
    """A pipeline over paths that must exist now (summary, export, check)."""
    pipeline = _pipeline(paths, labels)
    for problem in pipeline.problems:
        if problem.kind is ProblemKind.MISSING:
            _fail(problem.message)
    for problem in pipeline.problems:
        warn(problem.message)
    if not pipeline.readers:
        _fail("nothing to read")
    return pipeline


@click.group(cls=DefaultGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trainwatch")
@click.option("--debug", is_flag=True, help="Show Python tracebacks on internal errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Live dashboard for training logs.

    \b
      trainwatch logs/out.log          open the dashboard (also: a directory, a glob, or -)
      trainwatch summary logs/ --json  one report, for scripts
      trainwatch compare a.log b.log   runs side by side (--json: one report per run)
      trainwatch export logs/ -f       records as JSONL while the run goes on
      trainwatch check logs/out.log    exit 1 if stalled, crashed or NaN; 3 if unknown
      trainwatch watch logs/ --on-change 'notify-send "$TRAINWATCH_REASON"'
                                       one line (and CMD) per change of status or new finding
      trainwatch demo                  replay a bundled log live
    """
    ctx.obj = {"debug": debug}
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@main.command("open")
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option("--poll", is_flag=True, help="Poll files instead of inotify (network filesystems).")
@click.option(
    "--poll-interval",
    type=float,
    default=None,
    help="Seconds between two full reads of a polled file (default 0.25); a file that grew in the last"
    " 10 s is also stat-checked every 0.05 s, a file quiet for 10 s is read once a second.",
)
@click.option(
    "--notify",
    is_flag=True,
    help="When the run turns crashed or stalled: ring the bell and post a desktop notification"
    " (OSC 9 and OSC 777; a flapping run is told once).",
)
@click.option(
    "--notify-settle",
    type=click.FloatRange(min=0),
    default=SETTLE_S,
    show_default=True,
    help="With --notify: seconds a new status must hold before it is told (as `watch --settle`).",
)
@click.option(
    "--screenshot-dir",
    type=click.Path(file_okay=False, dir_okay=True, exists=True, writable=True, path_type=Path),
    default=None,
    help="Where the palette's Screenshot saves its SVG (default: the current directory).",
)
@click.pass_context
def open_dashboard(
    ctx: click.Context,
    paths: tuple[str, ...],
    labels: tuple[str, ...],
    poll: bool,
    poll_interval: float | None,
    notify: bool,
    notify_settle: float,
    screenshot_dir: Path | None,
) -> None:
    """Open the live dashboard on PATHS (files, directories, globs, streams, or - for stdin)."""
    if not sys.stdout.isatty():
        warn("stdout is not a terminal; printing the summary instead of the dashboard")
        ctx.invoke(summary, paths=paths, labels=labels, as_json=False)
        return
    if "-" in paths:
        from trainwatch.sources.stdin import keys_from_terminal

        if not keys_from_terminal():
            warn(
                "stdin is the data and there is no terminal to read keys from; printing the summary once the input ends"
            )
            ctx.invoke(summary, paths=paths, labels=labels, as_json=False)
            return
    from trainwatch.sources.discover import stream_labels
    from trainwatch.ui.app import run_dashboard

    try:
        stream_labels(list(paths), list(labels))
    except ValueError as exc:
        _fail(str(exc))
    run_dashboard(
        list(paths),
        poll=poll,
        poll_interval=poll_interval,
        labels=list(labels),
        notify=notify,
        notify_settle=notify_settle,
        screenshot_dir=screenshot_dir,
    )


@main.command()
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object (the contract's summary), for scripts.")
def summary(paths: tuple[str, ...], labels: tuple[str, ...], as_json: bool) -> None:
    """Read PATHS to their end and report: status, steps, latest metrics, phases, events, findings."""
    from trainwatch.views.summary import print_summary, summary_json

    pipeline = _pipeline_for_reading(paths, labels)
    pipeline.read_to_end()
    if as_json:
        import json

        click.echo(json_safe(json.dumps(summary_json(pipeline.store), indent=2, ensure_ascii=False)))
    else:
        print_summary(pipeline.store)


@main.command()
@patterns_option
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--label",
    "labels",
    metavar="NAME",
    multiple=True,
    help="Name of a RUN, in the order of the runs; repeat for each (default: a short name from its path).",
)
@click.option("--json", "as_json", is_flag=True, help='{"runs": [{"label": ..., <summary --json>}, ...]}, for scripts.')
@click.option("--poll", is_flag=True, help="Poll files instead of inotify (network filesystems).")
def compare(runs: tuple[str, ...], labels: tuple[str, ...], as_json: bool, poll: bool) -> None:
    """Runs side by side: RUN RUN [RUN...], each a file, directory or glob. The dashboard overlays
    them on each chart, one colour per run, with a Runs tab; --json (or no terminal) prints each
    run's summary apart."""
    from trainwatch.views.compare import compare_json, open_runs

    if len(runs) < 2:
        _fail("compare needs at least two runs")
    try:
        opened = open_runs(runs, labels, force_poll=poll)
    except ValueError as exc:
        _fail(str(exc))
        raise  # (not reached: _fail exits)
    for run in opened:
        for problem in run.pipeline.problems:
            if problem.kind is ProblemKind.MISSING:
                _fail(f"{run.label}: {problem.message}")
            warn(f"{run.label}: {problem.message}")
        if not run.pipeline.readers:
            _fail(f"{run.label}: nothing to read")
    if as_json or not sys.stdout.isatty():
        for run in opened:
            run.pipeline.read_to_end()
        if as_json:
            import json

            doc = compare_json([(run.label, run.store) for run in opened])
            click.echo(json_safe(json.dumps(doc, indent=2, ensure_ascii=False)))
            return
        from trainwatch.views.summary import print_summary

        warn("stdout is not a terminal; printing each run's summary instead of the dashboard")
        for run in opened:
            click.echo(f"== {printable(run.label)}")
            print_summary(run.store)
        return
    from trainwatch.ui.compare.app import run_compare

    run_compare([(run.label, run.pipeline) for run in opened])


@main.command()
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option(
    "--stall-after",
    type=float,
    default=None,
    help="Seconds without a step that count as stalled (default: from the log's own cadence).",
)
@click.option(
    "--full",
    is_flag=True,
    help="Read every file from its start even when its last MBs decide the answer (a NaN that only the"
    " older history holds then makes the exit code 1).",
)
def check(paths: tuple[str, ...], labels: tuple[str, ...], stall_after: float | None, full: bool) -> None:
    """Exit 0 if the run is running or finished, 1 if stalled, crashed or NaN, 3 if no training step is
    recognised (2: usage error); one line says why."""
    from trainwatch.diagnosis.check import check_line
    from trainwatch.views.check_tail import answer_from_window

    pipeline = _pipeline_for_reading(paths, labels)
    answer = None
    # A big log's end decides most answers (a crash, a finish, a fresh step): read it alone first.
    if not full and pipeline.read_windows():
        answer = answer_from_window(pipeline.store, stall_after=stall_after)
        if answer is None:
            pipeline = _pipeline(paths, labels)  # (its problems were said above)
    if answer is None:
        pipeline.read_to_end()
        answer = check_line(pipeline.store, stall_after=stall_after)
    code, line = answer
    click.echo(printable(line))
    sys.exit(code)


@main.command()
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option("--follow", "-f", is_flag=True, help="Keep following like tail -F; flush each record at once.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to FILE instead of stdout.")
@click.option("--poll", is_flag=True, help="With --follow: poll files instead of inotify (network filesystems).")
@click.option(
    "--poll-interval",
    type=float,
    default=None,
    help="With --follow: seconds between two full reads of a polled file (default 0.25); a file that grew"
    " in the last 10 s is also stat-checked every 0.05 s, a file quiet for 10 s is read once a second.",
)
def export(
    paths: tuple[str, ...],
    labels: tuple[str, ...],
    fmt: str,
    follow: bool,
    output: str | None,
    poll: bool,
    poll_interval: float | None,
) -> None:
    """Write parsed records (step, phases, event, profile) as JSONL or CSV."""
    out = open(output, "w", encoding="utf-8") if output else sys.stdout
    writer: JsonlWriter | CsvWriter = JsonlWriter(out) if fmt == "jsonl" else CsvWriter(out, streaming=follow)
    if not follow:
        pipeline = _pipeline_for_reading(paths, labels)
        pipeline.add_sink(writer.write)
        try:
            pipeline.read_to_end()
            writer.close()
        except BrokenPipeError:
            sys.stderr.close()
        return
    pipeline = _pipeline(paths, labels, sink=writer.write, poll_interval=poll_interval, force_poll=poll)
    for problem in pipeline.problems:
        warn(problem.message)
    stop = threading.Event()

    def _stop(_signum: int, _frame: Any) -> None:
        stop.set()  # (nothing else: the main thread may hold any lock when a handler runs)

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        pipeline.follow(stop, until_inputs_end=True)
        pipeline.finish_all()
        writer.close()
    except BrokenPipeError:
        sys.stderr.close()


@main.command()
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@labels_option
@click.option(
    "--on-change",
    "on_change",
    metavar="CMD",
    help="Shell command run for each change and new finding (not for a run found running at the start),"
    " with TRAINWATCH_STATUS, _REASON, _SOURCE, _STEP, _FINDING in its environment.",
)
@click.option(
    "--every",
    metavar="SECONDS",
    type=click.FloatRange(min=0.05),
    default=EVERY_S,
    show_default=True,
    help="Seconds between two looks at the run.",
)
@click.option(
    "--settle",
    metavar="SECONDS",
    type=click.FloatRange(min=0.0),
    default=SETTLE_S,
    show_default=True,
    help="Seconds a new status or finding must hold before it is told; a run going back and forth must"
    " hold 20 times as long.",
)
@click.option(
    "--timeout",
    metavar="SECONDS",
    type=click.FloatRange(min=0.1),
    default=TIMEOUT_S,
    show_default=True,
    help="Seconds CMD may run before it is killed (reported; the watch goes on).",
)
@click.option(
    "--stall-after",
    type=float,
    default=None,
    help="Seconds without a step that count as stalled (default: from the log's own cadence).",
)
@click.option("--forever", is_flag=True, help="Keep watching after the run finished or crashed (a relaunch).")
@click.option("--poll", is_flag=True, help="Poll files instead of inotify (network filesystems).")
@click.option(
    "--poll-interval", type=float, default=None, help="Seconds between two full reads of a polled file (default 0.25)."
)
def watch(
    paths: tuple[str, ...],
    labels: tuple[str, ...],
    on_change: str | None,
    every: float,
    settle: float,
    timeout: float,
    stall_after: float | None,
    forever: bool,
    poll: bool,
    poll_interval: float | None,
) -> None:
    """Follow PATHS without a screen: one line per change of status and per new error or warning
    finding, each also running CMD; exits once the run finished or crashed (status as `check`'s
    exit code) unless --forever."""
    from trainwatch.views.watch_loop import run_watch

    pipeline = _pipeline(paths, labels, poll_interval=poll_interval, force_poll=poll)
    for problem in pipeline.problems:
        warn(problem.message)
    stop = threading.Event()

    def _stop(_signum: int, _frame: Any) -> None:
        stop.set()  # (nothing else: the main thread may hold any lock when a handler runs)

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)

    def emit(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    options = WatchOptions(on_change, every, settle, timeout, stall_after, forever)
    try:
        code = run_watch(pipeline, options, stop, emit, warn)
    except BrokenPipeError:
        sys.stderr.close()
        code = 0
    sys.exit(code)


@main.command()
@click.option("--speed", type=float, default=1.0, show_default=True, help="Replay speed multiplier.")
def demo(speed: float) -> None:
    """Replay a bundled real log into a temp file at a job's pace and open the dashboard on it."""
    from trainwatch.demo import run_demo

    run_demo(speed=speed)


@main.command()
def formats() -> None:
    """List the log formats trainwatch recognises."""
    from rich.table import Table
    from rich.text import Text

    from trainwatch.parsers.registry import parser_classes
    from trainwatch.views.safe_console import safe_console

    table = Table("name", "format", "example", box=None, highlight=False)
    for cls in parser_classes():  # examples are log text (`[rank3]:`, `:train:`): never markup or emoji codes
        table.add_row(Text(cls.name), Text(cls.title), Text(cls.example))
    safe_console(highlight=False).print(table)


@main.command()
@patterns_option
@click.argument("paths", nargs=-1, required=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def serve(paths: tuple[str, ...], host: str, port: int) -> None:
    """Serve the dashboard to a browser (needs: pip install 'trainwatch-tui[web]'). No authentication."""
    from trainwatch.serve import run_server

    run_server(list(paths), host=host, port=port)


def run() -> None:
    """Entry point: no Python traceback reaches the user unless --debug."""
    debug = "--debug" in sys.argv[1:]
    try:
        main(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if debug:
            raise
        warn(f"internal error: {exc.__class__.__name__}: {exc} (run with --debug for details)")
        sys.exit(EXIT_USAGE)
