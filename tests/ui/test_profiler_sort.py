"""The Profiler tab's `o` sort says which column it sorts by and in which direction."""

from __future__ import annotations

from _ui_helpers import frozen, wait_for
from conftest import SAMPLES

from trainwatch.pipeline import Pipeline
from trainwatch.ui.widgets.profiler import ProfileTable

LIGHTNING = SAMPLES / "lightning__cpu_simple_profiler_slow_dataset.log"


def headers(table: ProfileTable) -> list[str]:
    return [c.label.plain for c in table.ordered_columns]


async def test_o_moves_the_sort_arrow_to_the_next_column_and_a_second_sort_flips_it() -> None:
    pipeline = Pipeline([str(LIGHTNING)])
    pipeline.read_to_end()
    app = frozen(pipeline.store)
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()
        table = app.query(ProfileTable).first()
        first = headers(table)
        assert [h for h in first if h.endswith(" ▼")] == [first[1]]  # by share, largest first
        await pilot.press("o")
        assert await wait_for(pilot, lambda: table.sort_index == 2)
        second = headers(table)
        assert [h for h in second if h.endswith((" ▼", " ▲"))] == [second[2]] and second[2].endswith(" ▼")
        table.sort_by(2)  # the same column again (a header click): the other direction
        await pilot.pause()
        assert headers(table)[2].endswith(" ▲")
