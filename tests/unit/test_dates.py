"""Dates and timestamps are real (issue 36 item 2): calendar-valid, in the documented range, one rule for the
schema's fast path and its reference path, and for `orv new` and `orv check` alike."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from tests.testing.registry import make_registry
from validator import dates
from validator.cli import main
from validator.commands import new_recipe as scaffold
from validator.load import schema as schemas
from validator.models import RunMeta, TrainingRecipe

# A fixed checking clock: the rule is tested against it, never against today's date.
AT = datetime.datetime(2026, 12, 4, 18, 0, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("text", ["2026-02-31", "2026-02-29", "2025-04-31", "2100-02-29"])
def test_a_day_the_calendar_does_not_have_is_refused_by_name(text: str) -> None:
    assert dates.problem(text, AT) == f"`{text}` is not a day on the calendar"


@pytest.mark.parametrize(
    "text",
    [
        "2024-02-29",
        "2026-10-18",
        "2026-10-18T09:30:00.5+02:00",
        "2026-10-18 09:30",
        "2026-12-05",
        "2026-12-05T17:59:59Z",
        "2015-01-01",
        "2026-12-05T23:59:59+06:00",
    ],
)
def test_real_dates_in_range_pass(text: str) -> None:
    assert dates.problem(text, AT) is None


@pytest.mark.parametrize(
    "text, word",
    [
        ("2026-12-06", "future"),
        ("2026-12-05T18:00:01Z", "future"),
        ("2099-01-01", "future"),
        ("2014-12-31", "before 2015-01-01"),
        ("2026-12-05T12:00:01-06:00", "future"),
    ],
)
def test_dates_outside_the_range_are_refused(text: str, word: str) -> None:
    why = dates.problem(text, AT)
    assert why is not None and word in why


def test_a_timestamp_without_a_zone_is_utc() -> None:
    assert dates.moment("2026-10-18T09:30") == datetime.datetime(2026, 10, 18, 9, 30, tzinfo=datetime.timezone.utc)
    assert dates.moment("2026-10-18T09:30+02:00") == datetime.datetime(
        2026, 10, 18, 7, 30, tzinfo=datetime.timezone.utc
    )


@pytest.mark.parametrize(
    "text",
    [
        "2026-13-45T25:61:61Z",
        "2026-00-10",
        "2026-01-00",
        "2026-10-18T24:00:00Z",
        "2026-10-18T10:60:00Z",
        "2026-10-18T10:00:60Z",
        "2026-10-18T10:00:00+24:00",
        "2026-10-18T10:00:00+05:60",
        "２０２６-10-18",
    ],
)
def test_the_timestamp_shape_refuses_impossible_fields_on_both_paths(text: str) -> None:
    """The compiled model (fast path) and jsonschema (reference path) refuse the same shapes."""
    from pydantic import ValidationError

    run = {
        "kind": "inference",
        "tool": {"name": "vllm", "version": "0.11.0"},
        "model": "m",
        "hardware": {"gpu": "h100", "count": 1},
        "software": {"engine": {"name": "vllm", "version": "0.11.0"}},
        "quant": "bf16",
        "serving": {"concurrency": 1},
        "measured_at": text,
        "measured_by": "a",
        "summary": {"decode_tok_s": 1.0},
    }
    assert any(i.path == ("measured_at",) for i in schemas.validate("run-inference", run))
    assert not schemas.is_valid("run-inference", run)
    with pytest.raises(ValidationError):
        RunMeta.model_validate(run)
    assert dates.moment(text) is None


def test_orv_check_names_the_field_and_the_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    ids = {}
    for i, day in enumerate(["2026-02-31", "2999-01-01", "2010-06-01", "2026-10-18"]):
        assert (
            main(
                [
                    "new",
                    "training",
                    "--root",
                    str(root),
                    "--no-interactive",
                    "--model",
                    "qwen3.8-27b",
                    "--gpu",
                    "h100",
                    "--count",
                    "8",
                    "--pp",
                    "4",
                    "--framework",
                    "megatron-core@0.14.0",
                    "--author",
                    "lab",
                    "--measured",
                    "2026-10-18",
                    "--id",
                    f"dated-{i}",
                ]
            )
            == 0
        )
        rel = capsys.readouterr().out.strip()
        path = root / rel
        path.write_text(
            path.read_text(encoding="utf-8").replace('measured: "2026-10-18"', f'measured: "{day}"'), encoding="utf-8"
        )
        ids[rel] = day
    main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    found = {f["path"]: f["message"] for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "ORV121"}
    assert set(found) == {rel for rel, day in ids.items() if day != "2026-10-18"}
    for rel, message in found.items():
        assert message.startswith(f"`measured`: `{ids[rel]}`")


def test_orv_new_refuses_what_orv_check_would(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    catalog = scaffold.catalog_of(str(root))
    for day in ("2026-02-31", "2999-01-01", "2010-06-01", "18.10.2026"):
        answers = scaffold.Answers(
            kind="inference",
            model="qwen3.8-27b",
            gpu="h100",
            author="lab",
            measured=day,
            components={"engine": "vllm@0.11.0"},
        )
        with pytest.raises(scaffold.ScaffoldError) as info:
            scaffold.build(str(root), catalog, answers, datetime.date(2026, 12, 4))
        assert day in info.value.message


def test_the_model_and_the_schema_share_the_date_pattern() -> None:
    date = schemas.bundled("recipe-training")["properties"]["measured"]["pattern"]
    meta = TrainingRecipe.model_fields["measured"].metadata[0].pattern
    assert date == meta == dates.DATE_PATTERN
    stamp = schemas.bundled("run-inference")["properties"]["measured_at"]["pattern"]
    assert stamp == RunMeta.model_fields["measured_at"].metadata[0].pattern == dates.TIMESTAMP_PATTERN
