"""The API lock of the local server serves its waiters first come, first served."""

from __future__ import annotations

import threading
import time

from agent_memory.local.server import FairLock


def test_waiters_get_the_lock_in_the_order_they_came() -> None:
    # GIVEN a held lock and eight threads queueing for it one after another
    lock = FairLock()
    order: list[int] = []
    lock.__enter__()
    threads = []
    for i in range(8):

        def take(i: int = i) -> None:
            with lock:
                order.append(i)
                time.sleep(0.001)

        thread = threading.Thread(target=take)
        thread.start()
        threads.append(thread)
        while len(lock._waiters) < i + 1:  # queued before the next one starts
            time.sleep(0.0005)

    # WHEN the holder lets go
    lock.__exit__(None, None, None)
    for thread in threads:
        thread.join(5)

    # THEN each had it once, in arrival order, and the lock is free again
    assert order == list(range(8))
    with lock:
        assert lock._held
    assert not lock._held and not lock._waiters


def test_many_threads_never_hold_it_together() -> None:
    # GIVEN a counter guarded by the lock
    lock = FairLock()
    inside = 0
    most = 0

    def work() -> None:
        nonlocal inside, most
        for _ in range(200):
            with lock:
                inside += 1
                most = max(most, inside)
                inside -= 1

    # WHEN sixteen threads hammer it
    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    # THEN one at a time, always
    assert most == 1 and inside == 0
