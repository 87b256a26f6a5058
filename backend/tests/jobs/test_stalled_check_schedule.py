"""The stalled-job check must run every few seconds at any time of the hour, not only in some minutes."""

from datetime import UTC, datetime

from croniter import croniter

from tcplens.services.tasks import STALLED_CHECK_CRON


def test_the_stalled_check_runs_every_five_seconds_in_any_minute() -> None:
    # 08:11:49 is in a minute that is not a multiple of 5: the old "*/5 * * * * *" waited until 08:15.
    ticks = croniter(STALLED_CHECK_CRON, datetime(2026, 11, 22, 8, 11, 49, tzinfo=UTC))
    times = [ticks.get_next(datetime) for _ in range(3)]
    assert [t.strftime("%H:%M:%S") for t in times] == ["08:11:50", "08:11:55", "08:12:00"]
