"""Command line: `trainwatch PATH...` (dashboard), summary, export, check, demo, formats, serve."""

from __future__ import annotations

import signal
import sys
import threading

import click

from trainwatch import __version__
from trainwatch.pipeline import Pipeline
from trainwatch.views.export import FORMATS, CsvWriter, JsonlWriter

EXIT_USAGE = 2


def _fail(message: str) -> None:
    click.echo(f"trainwatch: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _check_paths_exist(paths: tuple[str, ...]) -> Pipeline:
    pipeline = Pipeline(list(paths))
    missing = [p for p in pipeline.problems if p.endswith("no such file")]
    if missing:
        _fail(missing[0])
    for problem in pipeline.problems:
        if not problem.endswith("no such file"):
            click.echo(f"trainwatch: {problem}", err=True)
    if not pipeline.readers:
        _fail("nothing to read")
    return pipeline


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="trainwatch")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Live dashboard for training logs: trainwatch logs/out.log"""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="jsonl", show_default=True)
@click.option("--follow", "-f", is_flag=True, help="Keep following like tail -F; flush each record at once.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to FILE instead of stdout.")
def export(paths: tuple[str, ...], fmt: str, follow: bool, output: str | None) -> None:
    """Write parsed records (step, phases, event, profile) as JSONL or CSV."""
    out = open(output, "w", encoding="utf-8") if output else sys.stdout  # noqa: SIM115
    writer: JsonlWriter | CsvWriter = JsonlWriter(out) if fmt == "jsonl" else CsvWriter(out, streaming=follow)
    if follow:
        pipeline = Pipeline(list(paths), sink=writer.write)
        for problem in pipeline.problems:
            click.echo(f"trainwatch: {problem}", err=True)
        stop = threading.Event()

        def _stop(_signum: int, _frame: object) -> None:
            stop.set()

        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
        try:
            pipeline.follow(stop)
        except BrokenPipeError:
            pass
        finally:
            for reader in pipeline.readers.values():
                if reader.spec.path is None:
                    reader.finish()
            try:
                writer.close()
            except BrokenPipeError:
                pass
        return
    pipeline = _check_paths_exist(paths)
    pipeline._extra_sink = writer.write
    try:
        pipeline.read_to_end()
        writer.close()
    except BrokenPipeError:
        sys.stderr.close()
