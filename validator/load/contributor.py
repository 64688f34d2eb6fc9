"""A contributor's own files read within bounds: regular files only, a size budget per kind, no link inside a folder.

`orv add-run`, the lm-eval reader, `orv catalog add-model` and the importers run on files people
downloaded from someone else, so every one of their reads comes here (docs/limits.md):
- a special file (FIFO, device, socket) is refused from its `stat`, before any open that could block;
  the open itself is O_NONBLOCK and the descriptor is `fstat`ed again (a second guard against a swap);
- a path the user names may be a link, to a regular file; a file found inside a folder is `lstat`ed,
  and a link there is refused, never followed (opened with O_NOFOLLOW as a second guard);
- a file over its kind's budget is refused from its size, before reading; at most budget + 1 bytes
  are read (a file that grows while being read, or reports size 0, cannot get past it);
- folders are listed without following links, to a bounded depth and number of entries;
- JSON goes through orjson, which bounds nesting (1,024) and never builds an integer past 64 bits.
Every refusal is an errors.InputFileError naming the file (and line and column for JSON).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from validator.errors import InputFileError, Refusal
from validator.load.documents import SURROGATE_ESCAPE, has_lone_surrogate

MiB = 1024 * 1024


@dataclass(frozen=True)
class Budget:
    """The most bytes orv reads of one kind of file; docs/limits.md says where each figure comes from."""

    kind: str
    limit: int


SERVING_RESULT = Budget("a serving benchmark result (vLLM, SGLang)", 1024 * MiB)
TRAINING_LOG = Budget("a training log (Megatron-LM, NeMo)", 256 * MiB)
LLAMA_BENCH = Budget("a llama-bench output", 16 * MiB)  # 1.2 KB a test (tests/fixtures/tools/llamabench)
TOOL_OUTPUT = Budget("a benchmark tool's output", 256 * MiB)  # a format without a budget of its own
RUN_DOCUMENT = Budget("a run document", 64 * MiB)
LMEVAL_RESULTS = Budget("an lm-eval results file", 64 * MiB)
LMEVAL_SAMPLES = Budget("an lm-eval samples file", 256 * MiB)
HF_CONFIG = Budget("a Hugging Face config.json", 1 * MiB)
SEED_SOURCE = Budget("a legacy seed source", 64 * MiB)
RECIPE = Budget("a recipe", 1 * MiB)
BUDGETS = (
    SERVING_RESULT,
    TRAINING_LOG,
    TOOL_OUTPUT,
    RUN_DOCUMENT,
    LMEVAL_RESULTS,
    LMEVAL_SAMPLES,
    HF_CONFIG,
    SEED_SOURCE,
    RECIPE,
    LLAMA_BENCH,
)

# Folder walks (the lm-eval output folder): lm-eval writes DIR/<model>/results_*.json, one level down.
MAX_DEPTH = 8
MAX_ENTRIES = 100_000

_BLOCK = 1 << 20


def _mib(n: int) -> str:
    return f"{n / MiB:,.0f} MiB" if n >= MiB else f"{n:,} bytes"


def _special(mode: int) -> str | None:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse_special(path: str, st: os.stat_result, named: bool) -> None:
    what = _special(st.st_mode)
    if what is not None:
        target = f" (it resolves to {os.path.realpath(path)})" if named and os.path.islink(path) else ""
        raise InputFileError(
            "ORV114",
            path,
            f"{path} is {what}{target}, not a regular file; orv reads regular files only",
            "give the file the tool wrote, copied as a regular file",
        )


def _refuse_size(path: str, size: int, budget: Budget) -> None:
    if size > budget.limit:
        raise InputFileError(
            "ORV111",
            path,
            f"{path} is {size:,} bytes, over the {_mib(budget.limit)} budget for {budget.kind}",
            "docs/limits.md lists the budgets and why; give the output of one run, unchanged",
        )


def read_named(path: str, budget: Budget) -> bytes:
    """A file the user named on the command line (`-`: standard input): a link is fine, to a regular file."""
    if path == "-":
        return read_stream("-", sys.stdin.buffer, budget)
    try:
        st = os.stat(path)  # follows the link the user named; never opens anything
    except OSError as exc:
        raise InputFileError(
            "ORV110", path, f"cannot read {path}: {exc.strerror}", "pass the path of the file"
        ) from None
    _refuse_special(path, st, named=True)
    return _read(path, st, budget, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))


def read_inside(path: str, budget: Budget) -> bytes:
    """A file found inside a folder: refused if it is a link (wherever it points) or not a regular file."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise InputFileError(
            "ORV110", path, f"cannot read {path}: {exc.strerror}", "give the folder the tool wrote"
        ) from None
    if stat.S_ISLNK(st.st_mode):
        raise _link_inside(path)
    _refuse_special(path, st, named=False)
    return _read(path, st, budget, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))


def _link_inside(path: str) -> InputFileError:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return InputFileError(
        "ORV114",
        path,
        f"{path} is a symbolic link (to {target}); orv follows no link found "
        "inside a folder, so a folder cannot hand it a file from elsewhere",
        "copy the file itself into the folder (or name it on the command line)",
    )


def _read(path: str, st: os.stat_result, budget: Budget, flags: int) -> bytes:
    _refuse_size(path, st.st_size, budget)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputFileError(
            "ORV114" if exc.errno == getattr(os, "ELOOP", -1) else "ORV110",
            path,
            f"cannot read {path}: {exc.strerror}",
            "give the file the tool wrote",
        ) from None
    with os.fdopen(fd, "rb", buffering=0) as fh:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise InputFileError(
                "ORV114",
                path,
                f"{path} changed into {_special(now.st_mode) or 'another file'} while orv opened it",
                "give a file nothing else is writing",
            )
        _refuse_size(path, now.st_size, budget)
        return read_stream(path, fh, budget)


def read_stream(path: str, fh: BinaryIO, budget: Budget) -> bytes:
    """At most budget + 1 bytes from `fh`, in blocks (never one allocation of the budget's size)."""
    chunks: list[bytes] = []
    got = 0
    while got <= budget.limit:
        chunk = fh.read(min(_BLOCK, budget.limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got > budget.limit:
        raise InputFileError(
            "ORV111",
            path,
            f"{path} holds more than the {_mib(budget.limit)} budget for {budget.kind}",
            "docs/limits.md lists the budgets and why",
        )
    return b"".join(chunks)


# --------------------------------------------------------------------------- folders


@dataclass(frozen=True)
class Listing:
    """A folder's regular files (paths), and the links and special files the walk passed by without entering."""

    files: tuple[str, ...]
    skipped: tuple[str, ...]


def walk(folder: str, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> Listing:
    """Every regular file under `folder`, never through a link (a link loop cannot hang it), bounded.

    `folder` itself must be a real folder, not a link: its contents are what the user vouches for.
    """
    try:
        st = os.lstat(folder)
    except OSError as exc:
        raise InputFileError(
            "ORV110", folder, f"cannot read {folder}: {exc.strerror}", "pass the folder the tool wrote"
        ) from None
    if stat.S_ISLNK(st.st_mode):
        raise InputFileError(
            "ORV114",
            folder,
            f"{folder} is a symbolic link (to {os.readlink(folder)}); orv lists no folder through a link",
            f"pass the folder itself: {os.path.realpath(folder)}",
        )
    files: list[str] = []
    skipped: list[str] = []
    entries = 0
    pending: list[tuple[str, int]] = [(folder, 0)]
    while pending:
        here, depth = pending.pop()
        for entry in _scan(here, max_entries - entries, folder, max_entries):
            entries += 1
            if entry.is_symlink():
                skipped.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 > max_depth:
                    raise InputFileError(
                        "ORV112",
                        entry.path,
                        f"{folder} nests folders deeper than {max_depth} levels",
                        "pass the output folder of one run",
                    )
                pending.append((entry.path, depth + 1))
            elif entry.is_file(follow_symlinks=False):
                files.append(entry.path)
            else:
                skipped.append(entry.path)
    return Listing(tuple(sorted(files)), tuple(sorted(skipped)))


def _scan(folder: str, limit: int, top: str, total: int) -> list[os.DirEntry[str]]:
    """One folder's entries, sorted; counted while listed, so a folder of millions stops at `limit`."""
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                entries.append(entry)
                if len(entries) > limit:
                    raise InputFileError(
                        "ORV111", top, f"{top} holds more than {total:,} entries", "pass the output folder of one run"
                    )
    except OSError as exc:
        raise InputFileError(
            "ORV110", folder, f"cannot list {folder}: {exc.strerror}", "pass a folder you can read"
        ) from None
    return sorted(entries, key=lambda e: e.name)


def list_beside(folder: str, max_entries: int = MAX_ENTRIES) -> tuple[str, ...]:
    """The names in one folder (not below it), bounded; the caller reads each with read_inside."""
    return tuple(entry.name for entry in _scan(folder, max_entries, folder, max_entries))


# --------------------------------------------------------------------------- JSON


_CONSTANTS = (b"NaN", b"Infinity")
_LONGEST_INT = 19  # orjson's range (64 bits): a longer literal becomes a float, as orjson makes it


def parse_json(path: str, raw: bytes, first_line: int = 1) -> Any:
    """JSON a tool wrote, parsed without recursion or unbounded integers; InputFileError with line and column.

    orjson bounds nesting at 1,024 and reads an integer past 64 bits as a float (infinity is an
    error). Tools written in Python may print NaN and Infinity (json.dumps does, and SGLang's result
    does); only then the standard library parses the text, with the same integer rule and its own
    recursion limit caught.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "UTF-8" in exc.msg or "surrogate" in exc.msg:
            raise _not_utf8(path, raw, first_line) from None
        if "depth" in exc.msg or not any(constant in raw for constant in _CONSTANTS):
            raise _json_error(path, exc.msg, exc.lineno, exc.colno, first_line, _field_before(raw, exc.pos)) from None
    return _parse_with_constants(path, raw, first_line)


_KEY = re.compile(rb'"((?:[^"\\]|\\.){1,100})"\s*:\s*')


def _field_before(raw: bytes, pos: int) -> str | None:
    """The key whose value starts at (or before) byte `pos`, to name the field in a finding."""
    keys = list(_KEY.finditer(raw, max(0, pos - 400), pos + 1))
    return keys[-1].group(1).decode("utf-8", "replace") if keys else None


class _Refused(Refusal, ValueError):
    def __init__(self, code: str, literal: str, message: str, hint: str) -> None:
        super().__init__(message, hint)
        self.code, self.literal = code, literal


def _int(text: str) -> int | float:
    if len(text.lstrip("-")) <= _LONGEST_INT:
        return int(text)
    return _float(text)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(
            "ORV113",
            text,
            f"the number {text[:20]}{'…' if len(text) > 20 else ''} is beyond the range of a double",
            "give the file the tool wrote, unchanged",
        )
    return value


def _not_utf8(path: str, raw: bytes, first_line: int) -> InputFileError:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + first_line
        return InputFileError(
            "ORV110", path, f"not UTF-8 (byte {exc.start})", "give the file the tool wrote, unchanged", line
        )
    return InputFileError(
        "ORV110",
        path,
        "a `\\uD800`-`\\uDFFF` escape names half of a UTF-16 surrogate pair, which is no character",
        "give the file the tool wrote, unchanged",
        first_line,
    )


def _parse_with_constants(path: str, raw: bytes, first_line: int) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(path, raw, first_line) from None
    try:
        data = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=float)
    except json.JSONDecodeError as exc:
        raise _json_error(path, exc.msg, exc.lineno, exc.colno, first_line) from None
    except _Refused as exc:
        at = text.find(exc.literal)
        line, col = (text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)) if at >= 0 else (1, 1)
        field = _field_before(raw, len(text[:at].encode("utf-8"))) if at >= 0 else None
        raise InputFileError(
            exc.code, path, f"{_named(field)}{exc.message}", exc.hint, line + first_line - 1, col
        ) from None
    except RecursionError:
        raise _json_error(path, "depth limit exceeded", 1, 1, first_line) from None
    except ValueError:  # int() past Python's digit limit cannot happen (_int); anything else is the file's
        raise _json_error(path, "a value cannot be read", 1, 1, first_line) from None
    _refuse_lone_surrogates(path, data, text, first_line)
    return data


def _refuse_lone_surrogates(path: str, data: Any, text: str, first_line: int) -> None:
    """What orjson refuses and the standard library lets through: a `\\ud800` escape naming half a
    character, which no UTF-8 file (and no canonical run file) can hold."""
    first = SURROGATE_ESCAPE.search(text)
    if first is None or not has_lone_surrogate(data):
        return
    line = text.count("\n", 0, first.start()) + first_line
    raise InputFileError(
        "ORV110",
        path,
        "a `\\uD800`-`\\uDFFF` escape names half of a UTF-16 surrogate pair, which is no character",
        "give the file the tool wrote, unchanged",
        line,
        first.start() - text.rfind("\n", 0, first.start()),
    )


def _named(field: str | None) -> str:
    return f"`{field}`: " if field else ""


def _json_error(
    path: str, message: str, line: int, col: int, first_line: int, field: str | None = None
) -> InputFileError:
    if "depth" in message or "recursion" in message:
        return InputFileError(
            "ORV112",
            path,
            "the JSON nests deeper than orv reads (1,024 levels)",
            "give the file the tool wrote; no tool output nests that deep",
            line + first_line - 1,
            col,
        )
    if "infinity" in message:
        return InputFileError(
            "ORV113",
            path,
            f"{_named(field)}the number is beyond the range of a double (a count or time has far fewer digits)",
            "give the file the tool wrote, unchanged",
            line + first_line - 1,
            col,
        )
    return InputFileError(
        "ORV101",
        path,
        f"JSON syntax error: {message}",
        "give the file the tool wrote, unchanged (a truncated or edited file cannot be read)",
        line + first_line - 1,
        col,
    )
