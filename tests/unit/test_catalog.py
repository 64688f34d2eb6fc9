"""One catalog reader, one name resolver: no module outside validator/registry/ names a catalog file or opens one,
and every caller resolves a written name to the same catalog id."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.testing.paths import REPO
from validator.load import schema as schemas
from validator.models import GpuSpec
from validator.registry.catalog import CatalogView, NameTable, catalog_names, fold, load_catalog
from validator.registry.layout import CATALOG_FILES
from validator.registry.snapshot import Catalog

PACKAGE = REPO / "validator"
REPO = PACKAGE.parent
FILE_NAMES = tuple(rel.rsplit("/", 1)[-1] for rel in CATALOG_FILES)  # hardware.yaml, models.yaml, …
PATH_NAMES = {"HARDWARE_PATH", "MODELS_PATH", "WORKLOADS_PATH", "STARTING_POINTS_PATH", "CATALOG_FILES"}
READERS = {"open", "load_yaml_document", "read_bytes", "Path"}  # what reads a file given its path
# The registry reads and edits the catalog; the CLI's help texts (validator/cli.py, being split into
# validator/cli/ elsewhere) still spell the paths out and are left to that change.
EXEMPT = ("registry", "cli")  # cli: help texts name the catalog files; nothing there reads them


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _called(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def violations(source: str) -> list[str]:
    """Catalog file names written as literals (docstrings and comments may name them), and catalog paths
    handed to a file reader."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [f"{node.lineno}: literal {name}" for name in FILE_NAMES if name in node.value]
        if isinstance(node, ast.Call) and _called(node) in READERS:
            names = {n.id for arg in node.args for n in ast.walk(arg) if isinstance(n, ast.Name)}
            found += [f"{node.lineno}: {_called(node)}({name})" for name in sorted(names & PATH_NAMES)]
    return found


def test_no_module_outside_the_registry_names_or_opens_a_catalog_file() -> None:
    offenders = {
        str(p.relative_to(REPO)): found
        for p in PACKAGE.rglob("*.py")
        if p.relative_to(PACKAGE).parts[0] not in EXEMPT
        for found in [violations(p.read_text(encoding="utf-8"))]
        if found
    }
    assert offenders == {}


def test_the_guard_finds_a_module_that_reads_a_catalog_file() -> None:
    # guards the guard: each way of reading the catalog behind registry/catalog.py's back is caught
    assert violations('def f(root):\n    return open(os.path.join(root, "catalog", "models.yaml"))\n')
    assert violations('def f(root):\n    return load_yaml_document(root, "catalog/hardware.yaml")\n')
    assert violations("def f(root):\n    return load_yaml_document(root, MODELS_PATH)\n")
    assert violations('WHERE = f"see {x} in catalog/workloads.yaml"\n')
    assert not violations('"""Reads catalog/models.yaml."""\nWHERE = f"see {MODELS_PATH}"\n')


def _gpu(name: str, *aliases: str) -> GpuSpec:
    return GpuSpec.model_validate({**_H100, "name": name, "aliases": list(aliases)})


_H100 = {"vendor": "nvidia", "bf16_dense_tflops": 989, "hbm_tb_s": 3.35, "sources": ["https://example.com/h100"]}


def test_one_folding_for_every_caller() -> None:
    hardware = {"h100-sxm": _gpu("NVIDIA H100 SXM5 80GB", "H100 SXM"), "rtx-3090": _gpu("NVIDIA GeForce RTX 3090")}
    view = CatalogView(hardware, {}, {})
    names = catalog_names(Catalog(hardware=hardware))[("hardware", "gpu")]
    for written, expected in [
        ("h100-sxm", "h100-sxm"),
        ("H100 SXM", "h100-sxm"),
        ("h100_sxm", "h100-sxm"),
        ("  nvidia geforce rtx 3090 ", "rtx-3090"),
        ("NVIDIA_GeForce_RTX_3090", "rtx-3090"),
        ("h100", None),
    ]:
        assert view.gpu_id(written) == names.resolve(written) == NameTable(hardware).resolve(written) == expected
    issues = schemas.validate(
        "recipe-inference", {"hardware": {"gpu": "H100_SXM", "count": 1}}, catalog_names(Catalog(hardware=hardware))
    )
    assert any("`h100-sxm`" in i.hint for i in issues if i.path == ("hardware", "gpu"))
    assert fold(" A_b  c ") == "a-b-c"


def test_the_importers_read_the_catalog_orv_check_reads() -> None:
    view = load_catalog(str(REPO))
    assert view.gpu_id("H100") == "h100" and view.model_id(next(iter(view.models))) == next(iter(view.models))


# --------------------------------------------------------------------------- orv catalog add-host (issue 52)


def test_add_host_writes_a_cpu_host_a_recipe_can_name_and_keeps_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.testing.registry import make_registry
    from validator.cli import main

    root = make_registry(tmp_path / "registry")
    hardware = root / "catalog" / "hardware.yaml"
    before = hardware.read_text(encoding="utf-8")
    args = ["catalog", "add-host", "--root", str(root), "--id", "epyc-9654", "--name", "AMD EPYC 9654"]
    args += ["--vendor", "amd", "--device", "cpu", "--memory-gib", "768", "--memory-tb-s", "0.4608"]
    args += ["--memory-kind", "DDR5", "--alias", "EPYC 9654", "--source", "https://www.amd.com/ (12 x DDR5-4800)"]
    assert main(args) == 0
    after = hardware.read_text(encoding="utf-8")
    assert after.startswith(before.rstrip("\n")) and "  epyc-9654:\n    name: AMD EPYC 9654\n" in after
    assert "device: cpu" in after and "hbm_tb_s: 0.4608" in after
    assert "added CPU host epyc-9654" in capsys.readouterr().out
    # a recipe names it, and the whole registry stays clean of catalog findings
    code = main(
        ["new", "inference", "--root", str(root), "--model", "qwen3.8-27b", "--gpu", "EPYC 9654", "--no-interactive"]
        + ["--engine", "llama.cpp@b6800", "--quant", "q4-k-m", "--workload", "random-512-64", "--author", "a"]
    )
    out, err = capsys.readouterr()
    assert code == 0 and "epyc-9654" in out, err
    # a second time, the id is refused and the file is as it was
    assert main(args) == 2 and "is in catalog/hardware.yaml already" in capsys.readouterr().err
    assert hardware.read_text(encoding="utf-8") == after


def test_add_host_needs_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.testing.registry import make_registry
    from validator.cli import main

    root = make_registry(tmp_path / "registry")
    before = (root / "catalog" / "hardware.yaml").read_bytes()
    args = ["catalog", "add-host", "--root", str(root), "--id", "rtx-4090", "--name", "NVIDIA GeForce RTX 4090"]
    args += ["--vendor", "nvidia", "--memory-gib", "24", "--memory-tb-s", "1.008", "--memory-kind", "GDDR6X"]
    assert main(args) == 2 and "--source" in capsys.readouterr().err
    assert (root / "catalog" / "hardware.yaml").read_bytes() == before


def _add_host_args(root: Path, name: str = "AMD EPYC 9654") -> list[str]:
    args = ["catalog", "add-host", "--root", str(root), "--id", "epyc-9654", "--name", name, "--vendor", "amd"]
    args += ["--device", "cpu", "--memory-gib", "768", "--memory-tb-s", "0.4608", "--memory-kind", "DDR5"]
    return args + ["--source", "https://www.amd.com/"]


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_add_host_refuses_a_hardware_file_that_is_no_regular_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """catalog/hardware.yaml replaced by a link to /dev/zero or a FIFO: exit 1 in moments with a located finding,
    nothing written (the catalog reader's size and type limits, not an endless read or a hang)."""
    import os
    import time

    from tests.testing.registry import make_registry
    from validator.cli import main

    root = make_registry(tmp_path / "registry")
    hardware = root / "catalog" / "hardware.yaml"
    hardware.unlink()
    if kind == "dev-zero":
        hardware.symlink_to("/dev/zero")
    else:
        os.mkfifo(hardware)
    started = time.monotonic()
    code = main(_add_host_args(root))
    err = capsys.readouterr().err
    assert code == 1 and "catalog/hardware.yaml" in err and "Traceback" not in err, (code, err)
    assert time.monotonic() - started < 30
    assert hardware.is_symlink() if kind == "dev-zero" else hardware.is_fifo()


def test_add_host_keeps_line_separators_in_a_name_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """U+2028 and U+0085 in a name are written so that YAML reads the same name back, not split into lines."""
    import yaml

    from tests.testing.registry import make_registry
    from validator.cli import main

    root = make_registry(tmp_path / "registry")
    name = "AMD\u2028EPYC\u0085 9654"
    code = main(_add_host_args(root, name))
    err = capsys.readouterr().err
    if code == 0:
        data = yaml.safe_load((root / "catalog" / "hardware.yaml").read_text(encoding="utf-8"))
        assert data["gpus" if "gpus" in data else next(iter(data))]["epyc-9654"]["name"] == name
    else:  # refused: said, and nothing written
        assert code in (1, 2) and "Traceback" not in err, err
