"""The Profiler tab (key 5): its columns fit, long hook names are shortened with the full name in the
detail line, each number stays in the unit the log wrote, and `o` sorts as soon as the tab is shown.

Logs: sample_logs/lightning__cpu_simple_profiler_slow_dataset.log (Lightning SimpleProfiler) and
seed 001 (torch.profiler table), read by the real Pipeline.
"""

from __future__ import annotations

from _ui_helpers import frozen, read, row_texts, wait_for
from conftest import SAMPLES, seed
from textual.widgets import Static

from trainwatch.ui.widgets.profiler import ProfileTable

LIGHTNING = SAMPLES / "lightning__cpu_simple_profiler_slow_dataset.log"
CHECKPOINT_HOOK = (  # line 25 of the Lightning sample, 153 characters
    "[Callback]ModelCheckpoint{'monitor': None, 'mode': 'min', 'every_n_train_steps': 0, "
    "'every_n_epochs': 1, 'train_time_interval': None}.on_train_epoch_end"
)


async def test_profiler_columns_fit_and_the_long_name_is_shortened() -> None:
    app = frozen(read(LIGHTNING, seed("001")))
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.press("5")
        await pilot.pause()
        lightning, torch = list(app.query(ProfileTable))
        for table in (lightning, torch):
            # every column (name, share bar, the numbers) inside the 160 columns of the table
            used = sum(c.get_render_width(table) for c in table.columns.values())
            assert used <= table.size.width, (table.header, used, table.size.width)
            assert table.header[1] == "share"
        assert lightning.header == ["name", "share", "mean duration (s)", "num calls", "total time (s)", "percentage %"]
        rows = row_texts(lightning)
        # biggest share first; `Total` (100%) then run_training_epoch (98.967%)
        assert [r[0] for r in rows[:2]] == ["Total", "run_training_epoch"]
        hook = next(r for r in rows if r[0].endswith(".on_train_epoch_end") and r[0].startswith("[Callback]ModelC"))
        assert "…" in hook[0] and len(hook[0]) < len(CHECKPOINT_HOOK)
        # seconds columns stay in seconds with one number of decimals (the log: 2.8261e-05 and 0.020462)
        means = [r[2] for r in rows if r[2]]
        assert all("e-" not in m for m in means)
        assert len({len(m.split(".")[1]) for m in means}) == 1
        assert hook[2] == "0.020462" and hook[3] == "2"
        # the highlighted row's full name is in the detail line
        lightning.focus()
        lightning.move_cursor(row=rows.index(hook))
        await pilot.pause()
        details = [str(s.render()) for s in app.query(".profile-detail").results(Static)]
        assert any(CHECKPOINT_HOOK in d for d in details)
        # torch.profiler: each cell in the unit the log wrote it in (`13.980ms`, `140.000us`, `3.916s`)
        first = row_texts(torch)[0]
        assert first[0] == "train_step-0" and "13.980ms" in first and "3.916s" in first


async def test_profiler_tab_key_focuses_its_table_and_o_sorts() -> None:
    app = frozen(read(LIGHTNING))
    async with app.run_test(size=(160, 45)) as pilot:
        app.dashboard.fast_tick()
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()
        table = app.query(ProfileTable).first()
        assert app.focused is table
        before = [table.get_row_at(i)[0].plain for i in range(table.row_count)]
        await pilot.press("o")
        await pilot.pause()
        after = [table.get_row_at(i)[0].plain for i in range(table.row_count)]
        assert sorted(after) == sorted(before) and after != before
        assert await wait_for(pilot, lambda: table.sort_index == 2)  # share -> mean duration
