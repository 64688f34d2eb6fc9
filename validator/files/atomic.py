"""Durable writes: every file orv writes appears whole or not at all, survives a crash once written,
leaves no temporary file behind where git or `orv check` looks, and one writer at a time edits a registry.

Temporary files live in a scratch folder git never lists — `<git folder>/orv/tmp/` (the linked
worktree's own git folder in a worktree), or `<registry>/.orv-tmp/` outside git (ORV107 looks only
under the registry folders) — on the target's filesystem, so `os.replace` moves them into place. Only
when no such folder shares the target's filesystem does a temporary sit beside the target, named
`.orv-tmp-*` (the repository's .gitignore covers it). Each temporary is locked (`flock`) by the process
writing it; every command sweeps the temporaries no live process holds before it writes, so what a
kill -9 left behind is gone at the next write. The lock dies with its process: nothing to clean by hand.

Writers of one registry take turns (`writer_lock`: an exclusive flock in the scratch folder around a
read-modify-write). Files that belong together (a run file and the recipe line that lists it) are
written in a `transaction`: staged, fsynced, committed by a journal, then moved into place; a sweep
finishes a committed transaction whose writer died and removes an uncommitted one. A Ctrl-C during
one file's write or a commit is delivered when it has finished, never in between.
docs/durability.md says what each command guarantees.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import BinaryIO

from validator.files.interrupts import interrupts_deferred
from validator.git.plumbing import git_folder_of

PREFIX = ".orv-tmp-"  # every temporary file and folder; .gitignore covers `.orv-tmp*`
SCRATCH_OUTSIDE_GIT = ".orv-tmp"  # the registry's scratch folder when it is not a git work tree

# errno -> (what happened, what to do): conditions of the machine, not bugs of orv, and not the user's files
ENVIRONMENTAL = {
    errno.ENOSPC: ("no space left on the device", "free space and rerun"),
    errno.EDQUOT: ("disk quota exceeded", "free space (or raise the quota) and rerun"),
    errno.EFBIG: ("file size limit exceeded", "raise the file size limit (ulimit -f) and rerun"),
    errno.EROFS: ("read-only file system", "write to a writable checkout, or remount it read-write, and rerun"),
    errno.EACCES: ("permission denied", "make it writable (chmod, chown) and rerun"),
    errno.EPERM: ("operation not permitted", "make it writable (chmod; `chattr -i` if it is immutable) and rerun"),
    errno.EMFILE: ("too many open files", "raise the open-file limit (ulimit -n) and rerun"),
    errno.ENFILE: ("too many open files in the system", "close other programs and rerun"),
    errno.EIO: ("input/output error", "check the disk, then rerun"),
}


def environment_problem(exc: BaseException) -> str | None:
    """One line for an error of the machine (full disk, read-only folder, ...) naming the path, the
    condition and what to do; None for anything else."""
    if not isinstance(exc, OSError) or exc.errno not in ENVIRONMENTAL:
        return None
    what, todo = ENVIRONMENTAL[exc.errno]
    where = exc.filename if exc.filename is not None else "a file orv was using"
    return f"orv: {where}: {what}; {todo} (files orv writes are whole: each is old or new)"


# ------------------------------------------------------------------------------------------ scratch


def scratch_folder(folder: str) -> str:
    """Where temporaries for a file in `folder` go (created): a folder git never lists, on the same
    filesystem as `folder`; `folder` itself when there is none (names then start with PREFIX)."""
    folder = os.path.abspath(folder)
    for candidate in _scratch_candidates(folder):
        try:
            os.makedirs(candidate, exist_ok=True)
            if os.stat(candidate).st_dev == os.stat(folder).st_dev:
                return candidate
        except OSError:
            continue  # not writable there (a read-only .git): fall back to the next place
    return folder


def _scratch_candidates(folder: str) -> list[str]:
    git_folder = git_folder_of(folder)
    if git_folder is not None:
        return [os.path.join(git_folder, "orv", "tmp")]
    root = _registry_root(folder)
    return [os.path.join(root, SCRATCH_OUTSIDE_GIT)] if root is not None else []


def _registry_root(folder: str) -> str | None:
    """The nearest folder at or above `folder` holding catalog/ and recipes/ (registry.layout.find_root's rule)."""
    here = folder
    while True:
        if os.path.isdir(os.path.join(here, "catalog")) and os.path.isdir(os.path.join(here, "recipes")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def sweep(folder: str) -> int:
    """Clear the temporaries in `folder` no live process holds (a killed command's): a transaction that
    had committed is finished (its files moved into place), anything else removed. A writer holds its
    temporary's lock from creation to rename, so a held one is never touched."""
    removed = 0
    try:
        names = [n for n in os.listdir(folder) if n.startswith(PREFIX)]
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: a live writer's
        try:  # removed while locked: a writer that locks it afterwards sees it gone (st_nlink 0) and retries
            if os.path.isdir(path) and not os.path.islink(path):
                if os.path.isfile(os.path.join(path, JOURNAL)):
                    with _locked(_lock_path(folder)):  # finish it before any writer reads what it changes
                        _apply(path)
                shutil.rmtree(path, ignore_errors=True)
                removed += not os.path.lexists(path)
            else:
                os.unlink(path)
                removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def settle(root: str) -> None:
    """Before reading a registry: finish what a killed writer had committed, clear what it had not."""
    with contextlib.suppress(OSError):
        sweep(scratch_folder(root))


def _held(create: Callable[[], tuple[int, str]]) -> tuple[int, str]:
    """Create a temporary (file or folder) and lock it; again if a sweep removed it before the lock."""
    while True:
        try:
            fd, path = create()
        except FileNotFoundError:
            continue  # a sweep removed the new folder before it could be opened
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            alive = os.fstat(fd).st_nlink > 0
        except BaseException:
            os.close(fd)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
            raise
        if alive:
            return fd, path
        os.close(fd)


def _new_file(folder: str) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=PREFIX, dir=folder)


def _new_folder(folder: str) -> tuple[int, str]:
    path = tempfile.mkdtemp(prefix=PREFIX, dir=folder)
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY), path


# ------------------------------------------------------------------------------------------ writes


Fill = Callable[[BinaryIO], None]  # writes a file's whole content into the open file it is given


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` whole or not at all, durably (file and folder fsynced), through a locked
    temporary in the scratch folder. An OSError names `path` (never the temporary)."""
    write_atomic_from(path, lambda fh: _write_bytes(fh, data))


def write_atomic_from(path: str, fill: Fill) -> None:
    """write_atomic of what `fill` writes into the temporary: content written as it is made, never
    held whole in memory (the per-file results cache is ~300 MB at 10,000 recipes, issue 54)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        if _open and _open[-1].stage(path, fill):
            return
        scratch = scratch_folder(folder)
        sweep(scratch)
    except OSError as exc:
        raise _about(exc, path) from None
    with interrupts_deferred():
        fd, tmp = -1, ""
        try:
            fd, tmp = _held(lambda: _new_file(scratch))
            _fill_fd(fd, fill)
            os.fchmod(fd, 0o644)
            os.fsync(fd)
            os.replace(tmp, path)
            tmp = ""
            fsync_folder(folder)
        except OSError as exc:
            raise _about(exc, path) from None
        finally:
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            if fd >= 0:
                os.close(fd)


def _fill_fd(fd: int, fill: Fill) -> None:
    """Run `fill` on the open file `fd` (left open: its owner fsyncs and closes it)."""
    with os.fdopen(fd, "wb", closefd=False) as fh:  # buffered: a pickler writes in small pieces
        fill(fh)


def _write_bytes(fh: BinaryIO, data: bytes) -> None:
    fh.write(data)  # a buffered write of more than its buffer goes to the file directly, not copied


def fsync_folder(folder: str) -> None:
    """Make a rename in `folder` survive a crash (POSIX: the new name is durable once its folder is)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):  # filesystems that cannot
            raise
    finally:
        os.close(fd)


def _about(exc: OSError, path: str) -> OSError:
    """The same error, naming the file the user asked for rather than orv's temporary."""
    return OSError(exc.errno, exc.strerror, path) if exc.errno is not None else exc


# ------------------------------------------------------------------------------------------ folders


@contextlib.contextmanager
def staged_folder(target: str) -> Iterator[str]:
    """A locked, empty temporary folder on `target`'s filesystem to build a folder in; removed unless
    `swap_in` moved it to `target`. A kill leaves it in the scratch folder for the next sweep."""
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)
    scratch = scratch_folder(parent)
    sweep(scratch)
    fd, staging = -1, ""
    try:
        with interrupts_deferred():  # a Ctrl-C here arrives once `staging` is known, inside the cleanup guard
            fd, staging = _held(lambda: _new_folder(scratch))
        yield staging
    finally:
        with interrupts_deferred():
            if staging and os.path.lexists(staging):
                shutil.rmtree(staging, ignore_errors=True)
            if fd >= 0:
                os.close(fd)


def swap_in(staging: str, target: str) -> None:
    """Put the folder `staging` at `target` in one step: an existing target is exchanged with it
    (renameat2 RENAME_EXCHANGE, so a reader or a crash sees the old folder or the new one) and the old
    one, now at `staging`, removed."""
    target = os.path.abspath(target)
    with interrupts_deferred():
        if os.path.lexists(target):
            if not _exchange(staging, target):
                aside = staging + "-old"
                os.rename(target, aside)  # no exchange here: for a moment there is no folder at target
                os.rename(staging, target)
                os.rename(aside, staging)
        else:
            os.rename(staging, target)
        fsync_folder(os.path.dirname(target))


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux renameat2); False where the system or filesystem cannot."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), b)


# ------------------------------------------------------------------------------------------ turns

_held_locks: dict[str, tuple[int, int]] = {}  # lock file -> (fd, depth): re-entrant within a process


def _lock_path(scratch: str) -> str:
    """The registry's lock file, in its scratch folder: `.orv-tmp*` (gitignored) but never PREFIX (swept)."""
    return os.path.join(scratch, SCRATCH_OUTSIDE_GIT + ".lock")


@contextlib.contextmanager
def writer_lock(near: str) -> Iterator[None]:
    """Take turns with every other orv writing the registry holding `near` (a file or folder in it):
    an exclusive `flock` held for a read-modify-write. What a killed writer committed is finished first."""
    folder = near if os.path.isdir(near) else os.path.dirname(os.path.abspath(near))
    scratch = scratch_folder(folder)
    with _locked(_lock_path(scratch), folder):
        sweep(scratch)
        yield


@contextlib.contextmanager
def _locked(path: str, about: str | None = None) -> Iterator[None]:
    if path in _held_locks:
        fd, depth = _held_locks[path]
        _held_locks[path] = (fd, depth + 1)
    else:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _about(exc, about or os.path.dirname(path)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        _held_locks[path] = (fd, 1)
    try:
        yield
    finally:
        fd, depth = _held_locks[path]
        if depth > 1:
            _held_locks[path] = (fd, depth - 1)
        else:
            del _held_locks[path]
            os.close(fd)  # closing the only descriptor releases the lock


# ------------------------------------------------------------------------------------------ transactions

JOURNAL = "journal"  # in a transaction's folder: present = committed (every staged file whole and fsynced)


class _Transaction:
    """Files staged in one locked folder, moved into place together: a journal written last makes the
    set committed, and whoever finds a committed set its owner left (sweep) finishes it."""

    def __init__(self, scratch: str) -> None:
        self.scratch = scratch
        self.device = os.stat(scratch).st_dev
        self.fd, self.folder = _held(lambda: _new_folder(scratch))
        self.entries: list[tuple[str | None, str]] = []  # (staged name or None to remove, target)

    def stage(self, path: str, fill: Fill) -> bool:
        """Stage `path`'s new content (`fill` writes it); False when the target is on another
        filesystem (written at once)."""
        if os.stat(os.path.dirname(os.path.abspath(path))).st_dev != self.device:
            return False
        name = str(len(self.entries))
        fd = os.open(os.path.join(self.folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _fill_fd(fd, fill)
            os.fchmod(fd, 0o644)  # as write_atomic: readable by all, whatever the umask
            os.fsync(fd)
        finally:
            os.close(fd)
        self.entries.append((name, os.path.abspath(path)))
        return True

    def remove(self, path: str) -> None:
        self.entries.append((None, os.path.abspath(path)))

    def commit(self) -> None:
        fsync_folder(self.folder)
        journal = os.path.join(self.folder, JOURNAL)
        with open(journal + ".new", "w", encoding="utf-8") as fh:
            json.dump(self.entries, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(journal + ".new", journal)
        fsync_folder(self.folder)  # committed: from here on the set lands, now or at the next sweep
        _apply(self.folder)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self.fd)


def _apply(folder: str) -> None:
    """Move a committed transaction's files into place (again: a staged file already moved is skipped)."""
    with open(os.path.join(folder, JOURNAL), encoding="utf-8") as fh:
        entries = json.load(fh)
    touched = set()
    for name, target in entries:
        if name is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
        elif os.path.exists(os.path.join(folder, name)):
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.replace(os.path.join(folder, name), target)
            except OSError as exc:
                raise _about(exc, target) from None
        touched.add(os.path.dirname(target))
    for parent in sorted(touched):
        fsync_folder(parent)


_open: list[_Transaction] = []  # the transaction this process has open (at most one; inner ones join it)


@contextlib.contextmanager
def transaction(near: str) -> Iterator[None]:
    """Every write_atomic and remove in the block lands together when it ends, or none does (an
    exception, a Ctrl-C or a kill before the end). Holds the registry's writer lock throughout. Reads
    in the block see the files as they were."""
    if _open:
        yield
        return
    folder = near if os.path.isdir(near) else os.path.dirname(os.path.abspath(near))
    with writer_lock(folder):
        scratch = scratch_folder(folder)
        txn = None
        try:
            with interrupts_deferred():  # a Ctrl-C here arrives once `txn` is known, inside the cleanup guard
                try:
                    txn = _Transaction(scratch)
                except OSError as exc:
                    raise _about(exc, folder) from None
                _open.append(txn)
            yield
            with interrupts_deferred():
                txn.commit()
        finally:
            if txn is not None:
                _open.pop()
                with interrupts_deferred():
                    txn.close()


def remove(path: str) -> None:
    """Delete a file: with the open transaction, else at once."""
    if _open:
        _open[-1].remove(path)
    else:
        os.unlink(path)
