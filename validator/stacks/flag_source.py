"""Engine flag tables derived from the engine's own source by AST (never by importing it: the engines need torch).

Each table maps every option string the engine's argument parser accepts to its canonical name and how many
values it takes (argparse's `nargs`: 0 for a switch, 1, "?", "+" or "*"). Three ways engines declare flags are
read: literal `add_argument("--x", "-y", nargs=…, action=…)` calls; dataclass fields turned into flags
(vLLM's `get_kwargs`, Megatron-LM's `ArgumentGroupFactory`, SGLang's `Annotated[..., Arg(...)]`); each
following the engine's own naming rule. `python -m validator.stacks.flag_source ENGINE SOURCE_DIR` prints
the table; tests/unit/test_engine_flags.py re-derives the shipped tables when ORV_ENGINE_SOURCES is set.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

# argparse actions that take no value (BooleanOptionalAction also gives --no-X)
_SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version", "append_const"}
# SGLang's own argparse actions for deprecated switches (srt/arg_groups/argparse_actions.py: nargs=0 by default)
_SWITCH_ACTIONS |= {"DeprecatedAction", "DeprecatedStoreTrueAction", "DeprecatedStoreConstAction"}


def _const(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, SyntaxError, TypeError):
        return None


def _action_name(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


class Table:
    """option string -> (canonical, nargs); the first name an add_argument gives is canonical."""

    def __init__(self) -> None:
        self.flags: dict[str, dict[str, Any]] = {}

    def add(
        self,
        names: list[str],
        nargs: Any,
        negatable: bool = False,
        negations: list[str] | None = None,
        env: str | None = None,
    ) -> None:
        names = [n for n in names if n.startswith("-")]
        if not names:
            return
        canonical = next((n for n in names if n.startswith("--")), names[0])
        entry = self.flags.setdefault(canonical, {"aliases": [], "nargs": nargs})
        entry["nargs"] = nargs
        for name in names:
            if name != canonical and name not in entry["aliases"]:
                entry["aliases"].append(name)
        if negatable:
            entry["negation"] = "--no-" + canonical[2:]
        if negations:  # llama.cpp names its own (`--no-mmap`, `-fa off` is a value, not one)
            entry["negations"] = sorted(set(entry.get("negations", [])) | set(negations))
        if env:  # llama.cpp reads the option from this environment variable too (`.set_env`)
            entry["env"] = env

    def as_json(self) -> dict[str, Any]:
        return {k: self.flags[k] for k in sorted(self.flags)}


def _nargs_of(action: str | None, nargs: Any) -> tuple[Any, bool]:
    if action == "BooleanOptionalAction":
        return 0, True
    if action in _SWITCH_ACTIONS:
        return 0, False
    if nargs is not None:
        return nargs, False
    return 1, False


def literal_add_arguments(tree: ast.AST, table: Table, kwarg_nargs: Any = None) -> None:
    """Every `X.add_argument("--a", "-b", ...)` with literal names. `kwarg_nargs(call)`, when given, says the
    (nargs, negatable) of a call whose kwargs come from a `**mapping["field"]` (vLLM)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "add_argument":
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names or not all(n.startswith("-") for n in names):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        nargs, negatable = _nargs_of(_action_name(kw.get("action")), _const(kw.get("nargs")))
        if "nargs" in kw and _const(kw["nargs"]) is None and not negatable:
            nargs = 1  # an explicit nargs=None: one value, whatever the action's default
        if "action" not in kw and "nargs" not in kw and kwarg_nargs is not None:
            derived = kwarg_nargs(node)
            if derived is not None:
                nargs, negatable = derived
        table.add(names, nargs, negatable)


# --------------------------------------------------------------------------- dataclasses


def _classes(files: list[Path]) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, node)
    return out


def _fields(cls: str, classes: dict[str, ast.ClassDef]) -> list[ast.AnnAssign]:
    """The dataclass fields of `cls`, its bases' first (dataclasses.fields order)."""
    node = classes.get(cls)
    if node is None:
        return []
    out: list[ast.AnnAssign] = []
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        if name:
            out += _fields(name, classes)
    seen = {f.target.id for f in out if isinstance(f.target, ast.Name)}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not stmt.target.id.startswith("_"):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            if stmt.target.id in seen:
                out = [f for f in out if not (isinstance(f.target, ast.Name) and f.target.id == stmt.target.id)]
            out.append(stmt)
    return out


def _type_kind(annotation: str) -> str:
    """bool, bool|str, list or scalar, from the annotation's text (vLLM's and Megatron's rules)."""
    text = annotation.replace(" ", "")
    words = set(text.replace("[", ",").replace("]", ",").replace("|", ",").split(","))
    if "bool" in words and "str" in words and "Literal" not in text:
        return "bool|str"
    if "bool" in words:
        return "bool"
    if text.startswith(("list[", "List[", "tuple[", "set[", "Optional[list", "Optional[List")) or any(
        text.startswith(p) for p in ("list", "tuple")
    ):
        return "list"
    if "|None" in text and text.split("|")[0].startswith(("list", "tuple", "set")):
        return "list"
    return "scalar"


def _default_is_true(stmt: ast.AnnAssign) -> bool:
    value = stmt.value
    if isinstance(value, ast.Call):  # field(default=True, ...)
        for kw in value.keywords:
            if kw.arg == "default":
                return _const(kw.value) is True
        return False
    return _const(value) is True


def _field_metadata(stmt: ast.AnnAssign) -> dict[str, Any]:
    """Megatron's `field(metadata={"argparse_meta": {...}})`, what of it is literal."""
    if not isinstance(stmt.value, ast.Call):
        return {}
    for kw in stmt.value.keywords:
        if kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
            for key, value in zip(kw.value.keys, kw.value.values, strict=False):
                if _const(key) == "argparse_meta" and isinstance(value, ast.Dict):
                    out = {}
                    for k, v in zip(value.keys, value.values, strict=False):
                        name = _const(k)
                        out[name] = _action_name(v) if name == "action" else _const(v)
                    return out
    return {}


def _field_init_false(stmt: ast.AnnAssign) -> bool:
    return isinstance(stmt.value, ast.Call) and any(
        kw.arg == "init" and _const(kw.value) is False for kw in stmt.value.keywords
    )


# --------------------------------------------------------------------------- per engine


def vllm(src: Path) -> dict[str, Any]:
    """vLLM: EngineArgs.add_cli_args' literal names, each `**X_kwargs["field"]` typed by the config dataclass
    field (get_kwargs: bool -> BooleanOptionalAction, bool|str -> nargs "?", list/tuple/set -> nargs "+"),
    plus the server's frontend dataclass fields (`--` + name with `_` -> `-`)."""
    config_files = sorted((src / "vllm" / "config").glob("*.py")) + [
        src / "vllm" / "engine" / "arg_utils.py",
        src / "vllm" / "entrypoints" / "common" / "cli_args.py",
    ]
    classes = _classes(config_files)
    kinds: dict[str, str] = {}
    for cls in classes.values():
        for stmt in _fields(cls.name, classes):
            kinds.setdefault(f"{cls.name}.{stmt.target.id}", _type_kind(ast.unparse(stmt.annotation)))  # type: ignore[union-attr]
    arg_utils = ast.parse((src / "vllm" / "engine" / "arg_utils.py").read_text(encoding="utf-8"))
    # X_kwargs = get_kwargs(SomeConfig)
    mapping: dict[str, str] = {}
    for node in ast.walk(arg_utils):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "get_kwargs" and node.value.args:
                arg = node.value.args[0]
                if isinstance(arg, ast.Name) and isinstance(node.targets[0], ast.Name):
                    mapping[node.targets[0].id] = arg.id

    def kwarg_nargs(call: ast.Call) -> tuple[Any, bool] | None:
        spread = [kw.value for kw in call.keywords if kw.arg is None]
        # `**{**cache_kwargs["x"], "default": None}` spreads the field's kwargs too
        spread += [
            v for d in spread if isinstance(d, ast.Dict) for k, v in zip(d.keys, d.values, strict=False) if k is None
        ]
        for value in spread:
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
                cls = mapping.get(value.value.id)
                field = _const(value.slice)
                kind = kinds.get(f"{cls}.{field}")
                return {"bool": (0, True), "bool|str": ("?", False), "list": ("+", False)}.get(kind or "", (1, False))
        return None

    table = Table()
    literal_add_arguments(arg_utils, table, kwarg_nargs)
    cli = src / "vllm" / "entrypoints" / "common" / "cli_args.py"
    literal_add_arguments(ast.parse(cli.read_text(encoding="utf-8")), table)
    for frontend in ("BaseFrontendArgs", "FrontendArgs"):
        for stmt in _fields(frontend, classes):
            kind = _type_kind(ast.unparse(stmt.annotation))
            nargs, neg = {"bool": (0, True), "bool|str": ("?", False), "list": ("+", False)}.get(kind, (1, False))
            table.add(["--" + stmt.target.id.replace("_", "-")], nargs, neg)  # type: ignore[union-attr]
    # FlexibleArgumentParser registers EnableDisableAction for BooleanOptionalAction (utils/argparse_utils.py):
    # `--enable-x` pairs with `--disable-x` (and the reverse), besides argparse's `--no-` forms
    inverse = {"--enable-": "--disable-", "--disable-": "--enable-"}
    for canonical, entry in table.flags.items():
        if "negation" in entry:
            names = [canonical, *entry["aliases"]]
            extra = [inverse[p] + n.removeprefix(p) for n in names for p in inverse if n.startswith(p)]
            extra += ["--no-" + n[2:] for n in entry["aliases"] if n.startswith("--")]
            if extra:
                entry["negations"] = sorted(set(extra))
    return table.as_json()


def sglang(src: Path) -> dict[str, Any]:
    """SGLang: ServerArgs' fields declared `Annotated[T, Arg(...)]` or `Annotated[T, "help"]` in
    srt/arg_groups/fields/ (add_cli_args_from_dataclass: `--` + name, aliases, bool -> store_true,
    list -> nargs "+"), plus server_args.py's literal add_argument calls."""
    table = Table()
    for path in sorted((src / "sglang" / "srt" / "arg_groups" / "fields").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            ann = node.annotation
            if not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and len(ann.slice.elts) >= 2):
                continue
            raw, meta = ann.slice.elts[0], ann.slice.elts[1]
            arg: dict[str, Any] = {}
            if isinstance(meta, ast.Call) and _action_name(meta.func) == "Arg":
                for kw in meta.keywords:
                    arg[kw.arg or ""] = _action_name(kw.value) if kw.arg == "action" else _const(kw.value)
                    if kw.arg == "action_kwargs" and isinstance(kw.value, ast.Dict):
                        arg["action_kwargs"] = {
                            _const(k): _const(v) for k, v in zip(kw.value.keys, kw.value.values, strict=False)
                        }
            elif not (isinstance(meta, ast.Constant) and isinstance(meta.value, str)):
                continue
            if arg.get("no_cli"):
                continue
            names = [arg.get("cli_name") or "--" + node.target.id.replace("_", "-")] + list(arg.get("aliases") or [])
            kind = _type_kind(ast.unparse(raw))
            if arg.get("action"):
                nargs, neg = _nargs_of(arg["action"], (arg.get("action_kwargs") or {}).get("nargs"))
            elif "Literal" in ast.unparse(raw):
                nargs, neg = 1, False
            elif kind == "list" and not arg.get("type_parser"):
                nargs, neg = arg.get("nargs") or "+", False
            elif kind == "bool":
                nargs, neg = 0, False
            else:
                nargs, neg = arg.get("nargs") or 1, False
            table.add(names, nargs, neg)
    literal_add_arguments(ast.parse((src / "sglang" / "srt" / "server_args.py").read_text(encoding="utf-8")), table)
    return table.as_json()


def megatron(src: Path) -> dict[str, Any]:
    """Megatron-LM: megatron/training/arguments.py's literal add_argument calls and each
    `ArgumentGroupFactory(Config, exclude=[...])` (argument_utils.py: `--` + name with `_` -> `-`; a bool
    defaulting to False is store_true, to True `--no-X`/`--disable-X`; list -> nargs "+"; argparse_meta wins)."""
    arguments = src / "megatron" / "training" / "arguments.py"
    tree = ast.parse(arguments.read_text(encoding="utf-8"))
    table = Table()
    literal_add_arguments(tree, table)
    files = [p for p in (src / "megatron").rglob("*.py") if "config" in p.name or p.parent.name == "transformer"]
    classes = _classes(files)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _action_name(node.func) == "ArgumentGroupFactory" and node.args):
            continue
        cls = _action_name(node.args[0])
        exclude = set(next((_const(k.value) or [] for k in node.keywords if k.arg == "exclude"), []))
        for stmt in _fields(cls or "", classes):
            name = stmt.target.id  # type: ignore[union-attr]
            if name in exclude or _field_init_false(stmt):
                continue
            meta = _field_metadata(stmt)
            kind = _type_kind(ast.unparse(stmt.annotation))
            names = ["--" + name.replace("_", "-")]
            nargs: Any = 1
            if kind == "bool":
                nargs = 0
                if _default_is_true(stmt):
                    names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
            elif kind == "list":
                nargs = "+"
            if meta.get("arg_names"):
                names = list(meta["arg_names"])
            if "nargs" in meta and meta["nargs"] is not None:
                nargs = meta["nargs"]
            if meta.get("action") in _SWITCH_ACTIONS:
                nargs = 0
            table.add(names, nargs)
    return table.as_json()


_CPP_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_LAMBDA = re.compile(r"\[[^\]]*\]\s*\(([^)]*)\)")
_EXAMPLES = re.compile(r"\.set_(examples|excludes)\(\{([^}]*)\}\)")
_ENV = re.compile(r'\.set_env\("([A-Z0-9_]+)"\)')


def llama_cpp(src: Path) -> dict[str, Any]:
    """llama.cpp's llama-server: each `common_arg({names}, [{negations},] [VALUE_HINT, [VALUE_HINT_2,]] help,
    handler)` in common/arg.cpp whose `.set_examples` includes LLAMA_EXAMPLE_SERVER (or that sets none) and
    whose `.set_excludes` does not; the handler's parameters say how many values it takes
    (`(common_params &)` or `(…, bool)`: none; one more parameter: one; two strings: two); `.set_env("…")`
    names the environment variable common_params_parse_ex reads the option from before the command line."""
    text = (src / "common" / "arg.cpp").read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(r"\bcommon_arg\(", text)]
    table = Table()
    for n, start in enumerate(starts):
        chunk = text[start : starts[n + 1] if n + 1 < len(starts) else len(text)]
        lists = re.findall(r"\{\s*(\"[^{}]*)\}", chunk[: chunk.find("[") if "[" in chunk else len(chunk)])
        if not lists:
            continue
        names = _CPP_STRING.findall(lists[0])
        negations = _CPP_STRING.findall(lists[1]) if len(lists) > 1 else []
        lam = _LAMBDA.search(chunk)
        if not names or lam is None:
            continue
        params = [p.strip() for p in lam.group(1).split(",") if p.strip()]
        extra = params[1:]
        if not extra or "bool" in extra[0]:
            nargs: Any = 0
        else:
            nargs = len(extra)
        examples = {kind: body for kind, body in _EXAMPLES.findall(chunk)}
        served = ("LLAMA_EXAMPLE_SERVER", "LLAMA_EXAMPLE_COMMON")  # every option inherits COMMON (add_opt)
        if "examples" in examples and not any(e in examples["examples"] for e in served):
            continue
        if "LLAMA_EXAMPLE_SERVER" in examples.get("excludes", ""):
            continue
        env = _ENV.search(chunk)
        table.add(names, nargs, negations=negations, env=env.group(1) if env else None)
    return table.as_json()


def _click_nargs(kw: dict[str, ast.expr]) -> Any:
    """Click's value count for an option: a flag (`is_flag`, `count`, or a `--x/--no-x` pair) takes none;
    `nargs=-1` any number; else `nargs` (default 1)."""
    if _const(kw.get("is_flag")) is True or _const(kw.get("count")) is True:
        return 0
    nargs = _const(kw.get("nargs"))
    if nargs == -1:
        return "*"
    return nargs if isinstance(nargs, int) and nargs > 1 else 1


def trtllm_serve(src: Path) -> dict[str, Any]:
    """TensorRT-LLM's trtllm-serve: the `@click.option(...)` decorators of the function decorated
    `@click.command("serve")` in tensorrt_llm/commands/serve.py (the DefaultGroup runs `serve` when the first
    argument names no other command). Click takes each declaration as written: the first `--` name is the
    canonical one here, the others aliases, a bare identifier the parameter's name; `--x/--no-x` declares the
    negation; `multiple=True` collects every occurrence instead of keeping the last."""
    tree = ast.parse((src / "tensorrt_llm" / "commands" / "serve.py").read_text(encoding="utf-8"))
    table = Table()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        commands = [
            d for d in node.decorator_list if isinstance(d, ast.Call) and ast.unparse(d.func) == "click.command"
        ]
        if not commands or [_const(a) for a in commands[0].args[:1]] != ["serve"]:
            continue
        for deco in node.decorator_list:
            if not (isinstance(deco, ast.Call) and ast.unparse(deco.func) == "click.option"):
                continue
            decls = [a.value for a in deco.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            kw = {k.arg: k.value for k in deco.keywords if k.arg}
            names: list[str] = []
            negations: list[str] = []
            for decl in decls:
                first, slash, second = decl.partition("/")
                names.append(first.strip())
                if slash:
                    negations.append(second.strip())
            nargs = 0 if negations else _click_nargs(kw)
            table.add(names, nargs, negations=negations or None)
            canonical = next((n for n in names if n.startswith("--")), None)
            if canonical and _const(kw.get("multiple")) is True:
                table.flags[canonical]["multiple"] = True
    table.add(["--help"], 0)  # Click adds it to every command (help_option_names)
    return table.as_json()


EXTRACTORS = {
    "vllm": vllm,
    "sglang": sglang,
    "megatron": megatron,
    "llama.cpp": llama_cpp,
    "tensorrt-llm": trtllm_serve,
}

# Each parser's rules, read in the same source: vLLM's FlexibleArgumentParser (vllm/utils/argparse_utils.py)
# turns `_` into `-` in every `--key` before argparse sees it and never sets allow_abbrev (argparse's default,
# True); SGLang's prepare_server_args builds a plain `argparse.ArgumentParser(prog="sglang serve")` (prefixes
# allowed); Megatron-LM's parse_args passes `allow_abbrev=False`.
PARSERS: dict[str, dict[str, Any]] = {
    "vllm": {"underscores": True, "abbrev": True, "program": ["vllm", "serve"], "positional": "--model"},
    "sglang": {"underscores": False, "abbrev": True, "program": ["python", "-m", "sglang.launch_server"]},
    "megatron": {"underscores": False, "abbrev": False, "program": ["pretrain_gpt.py"]},
    # common/arg.cpp common_params_parse_ex: `_` -> `-` in a `--` argument, then an exact match (no prefix,
    # no `--flag=value`: the token is looked up whole); a repeated argument's last value is used
    "llama.cpp": {
        "underscores": True,
        "abbrev": False,
        "equals": False,
        "program": ["llama.cpp/build/bin/llama-server"],
    },
    # click/parser.py (OptionParser): a long option is looked up whole (no prefix: an unknown one is refused
    # with close matches), no `_`/`-` rewriting (the command sets no token_normalize_func), `--flag=value`
    # accepted, a repeated option's last value kept (all of them with multiple=True); `serve` is the default
    # subcommand and MODEL its positional argument
    "tensorrt-llm": {
        "underscores": False,
        "abbrev": False,
        "subcommand": "serve",
        "program": ["trtllm-serve"],
    },
}


def table(engine: str, source: Path, version: str, commit: str, origin: str) -> dict[str, Any]:
    """The stored table: where it came from, the parser's rules, the flags."""
    return {
        "engine": engine,
        "version": version,
        "commit": commit,
        "source": origin,
        "parser": PARSERS[engine],
        "flags": EXTRACTORS[engine](source),
    }


if __name__ == "__main__":
    engine, source, version, commit, origin = sys.argv[1:6]
    print(json.dumps(table(engine, Path(source), version, commit, origin), indent=1, sort_keys=True))
