"""State the engine thread shares with the app: the task hand-over is an event, not a poll."""

from __future__ import annotations

import threading

from tests.tui.conftest import SIZE, wait_for
from tui.app import TaskSlot


def test_the_task_slot_hands_the_task_over_once_it_is_put():
    slot = TaskSlot()
    got = []
    reader = threading.Thread(target=lambda: got.append(slot.get()))
    reader.start()
    assert not slot.filled and reader.is_alive()      # waiting, not polling a flag
    slot.put("the task")
    reader.join(10)
    assert got == ["the task"] and slot.filled


async def test_a_failed_engine_build_releases_the_waiting_workers(make_app, tmp_path):
    from tui.engine_host import SessionRequest

    app, _ = make_app(start=False)
    async with app.run_test(size=SIZE) as pilot:
        app.start_session(SessionRequest(task=str(tmp_path / "no-such-task")))
        await wait_for(pilot, lambda: app.engine_status == "failed", 60, "the failed build")
        assert app._task_slot.filled and app._task_slot.get() is None
        assert "no-such-task" in app.engine_error
