"""A spinner on stderr for any step over half a second, on a terminal only.

The first lint of a new copy takes 2-5 s and used to print nothing meanwhile, as if hung.
"""

from __future__ import annotations

import time

import pytest

from patchops.cli.output import Output


class _Console:
    """Stands in for rich's Console: records the statuses started and stopped."""

    def __init__(self):
        self.events = []

    def status(self, message):
        console = self

        class Status:
            def start(self):
                console.events.append(("start", message))

            def stop(self):
                console.events.append(("stop", message))

        return Status()


@pytest.fixture
def stderr(monkeypatch):
    console = _Console()
    monkeypatch.setattr(Output, "rich", lambda self: console)
    return console


@pytest.mark.parametrize("seconds, shown", [(0.1, False), (0.8, True)])
def test_a_step_shows_the_spinner_only_past_half_a_second(stderr, monkeypatch, seconds, shown):
    monkeypatch.setattr(Output, "is_terminal", property(lambda self: True))
    with Output(stderr=True).progress("linting"):
        time.sleep(seconds)
    assert stderr.events == ([("start", "linting"), ("stop", "linting")] if shown else [])
    time.sleep(0.6)   # a cancelled timer never fires later
    assert len(stderr.events) == (2 if shown else 0)


def test_no_spinner_when_stderr_is_not_a_terminal(stderr, monkeypatch):
    monkeypatch.setattr(Output, "is_terminal", property(lambda self: False))
    with Output(stderr=True).progress("linting"):
        time.sleep(0.7)
    assert stderr.events == []
