"""Ctrl-C is an answer: short steps it must not cut in half, and worker pools it leaves quiet.

A terminal sends SIGINT to every process of the command. The main process answers it (exit 130, one
line: validator/cli/error_handler.py); workers ignore it, so none prints a traceback, and the pool is shut down
without waiting for the work still queued.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) until the block ends, then deliver it: a short step that must not be cut
    in half (creating a temporary and its cleanup guard, a rename, starting workers) happens whole."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, Any]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught and callable(previous):
            previous(*caught[0])


def _quiet_worker(initializer: Callable[..., None] | None, *initargs: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C for the whole command
    if initializer is not None:
        initializer(*initargs)


def quiet_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    jobs: int,
    chunksize: int = 1,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[R]:
    """pool.map over `jobs` forked workers that ignore Ctrl-C; interrupted, the pool drops its queue."""
    pool = _quiet_pool(jobs, initializer, initargs)
    try:
        # the workers start here: forked while Ctrl-C is held, they never see the default handler
        with interrupts_deferred():
            results = pool.map(fn, items, chunksize=chunksize)
        yield from results
    except BaseException as exc:
        _stop(pool, exc)
        raise
    pool.shutdown(wait=True)


def quiet_stream(
    fn: Callable[[T], R],
    items: Iterable[T],
    jobs: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[R]:
    """fn over items in `jobs` forked workers that ignore Ctrl-C, results in input order, with at most
    2 * jobs items taken from `items` and not yet answered: unlike quiet_map (pool.map takes every
    item at once), a long generator of work is never held whole."""
    from collections import deque

    pool = _quiet_pool(jobs, initializer, initargs)
    pending: deque[Any] = deque()
    try:
        for item in items:
            with interrupts_deferred():  # the first submit forks the workers: while Ctrl-C is held
                pending.append(pool.submit(fn, item))
            while len(pending) >= 2 * jobs:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BaseException as exc:
        _stop(pool, exc)
        raise
    pool.shutdown(wait=True)


def _stop(pool: Any, exc: BaseException) -> None:
    """The pool ended early: its queue dropped; on Ctrl-C its workers too, mid-task (a worker ignores
    SIGINT, and one of ORV304's tasks takes seconds: the command answers now, not after it)."""
    if isinstance(exc, KeyboardInterrupt):
        terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
        if terminate is not None:
            terminate()
        else:  # before it, the pool's own table of its processes
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _quiet_pool(jobs: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> Any:
    import multiprocessing  # here: every write imports this module, few start workers
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=_quiet_worker, initargs=(initializer, *initargs))
