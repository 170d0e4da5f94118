"""Every fenced code block of README.md and docs/*.md is checked, by its language tag:

- ``python``: executed in a temporary directory, unless an HTML comment right before it says
  which test exercises it (``<!-- exercised by tests/…/test_x.py::test_y -->``: a block that
  needs a running runtime or Airflow's services); then that test must exist.
- ``properties`` and ``json``: a connector config (it names ``connector.class``; JSON may be
  REST's create body) is validated as REST and the Airflow hook validate it, with no error
  unless ``<!-- expect errors: key … -->`` names the keys that must have one; any other
  ``properties`` block is a worker config: every key is a worker key (or under a prefix the
  runtime passes on), it parses, and the classes it names exist.
- ``bash``/``sh``/``shell``: each command's program is one the project installs or an
  external tool it documents; make targets are the Makefile's, ``connect-runtime`` commands
  parse with its CLI, ``python -m`` modules exist, repository paths exist, and ``curl`` hits a
  path and method of the REST API's routes (its JSON body validated as above, but for
  the admin endpoints' level bodies).
- ``toml``, ``yaml``, ``ini``: parsed (entry points of a known plugin group); ``text``: the
  paths, modules and class names it mentions exist, or, for ``<!-- output of FILE -->``,
  the program's fixed phrases and JSON keys are still in FILE.

A block with no tag or another tag fails. The repository paths and modules the prose names in
code spans exist, relative links resolve (anchors to headings included), every docs page is
linked from the README and links back to it, and the README stays a front page of at most 250
lines.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import functools
import importlib
import importlib.util
import inspect
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PACKAGE = ROOT / "airflow_provider_connect"
README_MAX_LINES = 250


EXTERNAL_PROGRAMS = {
    "docker": "Docker's client, for docker/compose.yaml",
    "openssl": "makes AIRFLOW_JWT_SECRET for the compose stack",
    "curl": "a REST client; its paths are checked against the REST API's routes",
    "export": "the shell's",
    "cd": "the shell's",
}
"""Programs the docs run that the project does not install, with why they are there."""

PATH_SUFFIXES = (".py", ".md", ".sh", ".yaml", ".yml", ".properties", ".conf", ".sql", ".json")
PATH_SUFFIXES += (".toml", ".txt", ".png", ".cfg", ".ini", ".html")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    marker: str  # the HTML comment on the line before the fence, or ""

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def blocks_of(doc: Path) -> Iterator[Block]:
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        fence, lang = opening.group(2), opening.group(3).strip()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        previous = lines[i - 1].strip() if i > 0 else ""
        marker = previous if previous.startswith("<!--") else ""
        yield Block(doc, i + 1, lang, "\n".join(lines[i + 1 : end]) + "\n", marker)
        i = end + 1


BLOCKS = [b for doc in pages() for b in blocks_of(doc)]


def marker_value(block: Block, kind: str) -> str | None:
    found = re.fullmatch(rf"<!--\s*{kind}\s*:?\s*(.*?)\s*-->", block.marker)
    return found.group(1) if found else None


# Names in the repository -------------------------------------------------------------------


@functools.cache
def repo_paths() -> frozenset[str]:
    """Every file and directory of the work tree (directories with a trailing slash)."""
    skip = {".git", ".venv", "__pycache__", ".quix-venv", ".pytest_cache", ".ruff_cache"}
    found: set[str] = set()
    for path in ROOT.rglob("*"):
        relative = path.relative_to(ROOT)
        if skip & set(relative.parts) or any(p.endswith(".egg-info") for p in relative.parts):
            continue
        found.add(relative.as_posix() + ("/" if path.is_dir() else ""))
    return frozenset(found)


def path_exists(name: str) -> bool:
    """``name`` is a path of the tree, or the end of one (``entry/``, ``plugins.py``)."""
    name = name.removeprefix("./")
    return any(p == name or p.endswith("/" + name) for p in repo_paths())


@functools.cache
def package_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py")))


def module_or_attribute_exists(dotted: str) -> bool:
    """``dotted`` is a module, or a module's attribute (``…runtime.Connect``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        if cut == len(parts):
            return True
        target: Any = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def missing(names: list[str], exists: Callable[[str], bool]) -> list[str]:
    return [n for n in names if not exists(n)]


def path_tokens(text: str) -> list[str]:
    """Repository paths a text names: ``dir/``, ``dir/file.ext``, ``file.ext``."""
    tokens = []
    for raw in text.split():
        token = raw.strip("`'\",;:()[]{}")
        if "://" in raw or token.startswith(("/", "$", "~", "-")) or "…" in token:
            continue
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)*/", token) or (
            re.fullmatch(r"[\w.-]+(/[\w.-]+)*\.\w+", token)
            and any(token.endswith(s) for s in PATH_SUFFIXES)
        ):
            tokens.append(token)
    return tokens


def module_tokens(text: str) -> list[str]:
    return re.findall(r"\bairflow_provider_connect(?:\.\w+)+", text)


# The project's commands ---------------------------------------------------------------------


@functools.cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", text, re.M))


@functools.cache
def console_scripts() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    scripts: dict[str, str] = project["project"]["scripts"]
    return scripts


class Parsed(Exception):
    """Raised in place of running a command whose arguments parsed."""


def check_cli(args: list[str]) -> None:
    """``connect-runtime ARGS`` parse with the CLI's own parser (nothing runs)."""
    module, function = console_scripts()["connect-runtime"].split(":")
    main = getattr(importlib.import_module(module), function)
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *a: Any, **k: Any) -> Any:
        parse(self, *a, **k)
        raise Parsed

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_then_stop):
        try:
            main(args)
        except Parsed:
            pass
        except SystemExit as e:
            pytest.fail(f"connect-runtime {shlex.join(args)}: its CLI refuses it (exit {e.code})")
        else:
            pytest.fail(f"connect-runtime {shlex.join(args)}: the CLI parsed nothing")
    for arg in args:
        if "/" in arg and "://" not in arg and not arg.startswith("/"):
            assert path_exists(arg), f"connect-runtime names {arg}, which is not in the tree"


def definition(pattern: str, under: Path) -> Any:
    """The module under ``under`` whose source matches ``pattern``, imported (found by its
    source so that modules may move between the runtime's rooms)."""
    for path in sorted(under.rglob("*.py")):
        if re.search(pattern, path.read_text(encoding="utf-8"), re.M):
            relative = path.relative_to(ROOT).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            return importlib.import_module(".".join(parts))
    raise AssertionError(f"nothing under {under} defines {pattern!r}")


@functools.cache
def worker_config_module() -> Any:
    return definition(r"^class WorkerConfig\b", PACKAGE / "runtime")


@functools.cache
def rest_routes() -> tuple[tuple[re.Pattern[str], frozenset[str], str], ...]:
    """The REST app's routes: (path pattern, methods, path)."""
    import tempfile

    from airflow_provider_connect.store import MetadataStore

    module = definition(r"^def create_app\(", PACKAGE / "runtime")
    workers = worker_config_module()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/metadata.db"
        store = MetadataStore(url, migrate=True)
        try:
            worker = workers.WorkerConfig(
                {"bootstrap.servers": "127.0.0.1:9092", "metadata.url": url}
            )
            arguments = {"store": store, "worker": worker}
            parameters = inspect.signature(module.create_app).parameters
            app = module.create_app(
                *(arguments[p] for p in parameters if p in arguments),
            )
        finally:
            store.close()
    routes = []
    for route in app.routes:
        path = getattr(route, "path", None)
        methods = getattr(route, "methods", None) or set()
        if path:
            pattern = re.sub(r"\{[^}:]+:path\}", ".+", path)
            pattern = re.sub(r"\{[^}]+\}", "[^/]+", pattern)
            routes.append((re.compile(pattern + "/?"), frozenset(methods), path))
    return tuple(routes)


def check_curl(args: list[str]) -> None:
    urls = [a for a in args if a.startswith(("http://", "https://"))]
    assert len(urls) == 1, f"curl {shlex.join(args)}: one URL expected"
    method = None
    body = None
    for flag, value in zip(args, [*args[1:], ""], strict=True):
        if flag in ("-X", "--request"):
            method = value
        if flag in ("-d", "--data", "--data-raw"):
            body = value
    method = method or ("POST" if body is not None else "GET")
    path = re.sub(r"^https?://[^/]+", "", urls[0]).split("?")[0] or "/"
    allowed = [
        m for pattern, methods, _ in rest_routes() if pattern.fullmatch(path) for m in methods
    ]
    assert allowed, f"curl {urls[0]}: no REST route matches {path}"
    assert method in allowed, f"curl -X {method} {path}: the route takes {sorted(set(allowed))}"
    if body is not None and not path.startswith("/admin/"):  # a config or a create body
        check_connector_json(json.loads(body), expected=set())


def check_python_command(args: list[str]) -> None:
    if args[:1] == ["-m"]:
        module = args[1]
        assert importlib.util.find_spec(module) is not None, f"python -m {module}: no such module"
        if module == "bench.run" and "--only" in args:
            for name in args[args.index("--only") + 1].split(","):
                assert (ROOT / "bench" / f"{name}.py").is_file(), f"no benchmark {name}"
    else:
        assert (ROOT / args[0]).is_file(), f"python {args[0]}: no such file"


def check_airflow(args: list[str]) -> None:
    hook = (PACKAGE / "hooks" / "connect.py").read_text(encoding="utf-8")
    if "--conn-type" in args:
        conn_type = args[args.index("--conn-type") + 1]
        assert f'conn_type = "{conn_type}"' in hook, f"no hook of connection type {conn_type}"
    if "--conn-extra" in args:
        extra = json.loads(args[args.index("--conn-extra") + 1])
        for key in extra:
            assert f'"{key}"' in hook, f"the hook reads no extra {key!r}"


def check_command(words: list[str], block: Block) -> None:
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        words = words[1:]  # VAR=value before the program
    if not words:
        return
    program, args = words[0], words[1:]
    bin_dir = Path(sys.executable).parent
    if program == "make":
        check_make(args, block)
    elif program in console_scripts():
        assert program == "connect-runtime", f"{block.where}: {program} is not checked yet"
        check_cli(args)
    elif program == "spark-submit":
        assert (bin_dir / program).exists(), "spark-submit is not installed (pyspark)"
        check_spark_submit(args, block)
    elif program in ("python", "python3") or program.endswith("/bin/python"):
        check_python_command(args)
    elif program == "curl":
        check_curl(args)
    elif program == "airflow":
        assert (bin_dir / program).exists(), "airflow is not installed"
        check_airflow(args)
    elif program in EXTERNAL_PROGRAMS:
        check_external(program, args, block)
    else:
        pytest.fail(f"{block.where}: {program}: a program the docs do not know")


def check_make(args: list[str], block: Block) -> None:
    for target in (a for a in args if not a.startswith("-") and "=" not in a):
        assert target in make_targets(), (
            f"{block.where}: make {target}: no such target in the Makefile"
        )


def check_spark_submit(args: list[str], block: Block) -> None:
    scripts = [i for i, a in enumerate(args) if a.endswith(".py")]
    assert scripts, f"{block.where}: spark-submit of no script"
    script = args[scripts[0]]
    assert (ROOT / script).is_file(), f"{block.where}: spark-submit {script}: no such file"
    if script == "runtime/connect_runtime.py":
        check_cli(args[scripts[0] + 1 :])


def check_external(program: str, args: list[str], block: Block) -> None:
    """The repository paths given to a program the project does not install (docker, cd)."""
    for arg in args:
        if "/" in arg and "=" not in arg and "://" not in arg and arg[0] not in "/$":
            assert (ROOT / arg).exists(), f"{block.where}: {program} names {arg}"


def check_shell(block: Block) -> None:
    logical = re.sub(r"\\\n\s*", " ", block.code)
    for line in logical.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        for substitution in re.findall(r"\$\(([^)]*)\)", line):
            check_command(shlex.split(substitution), block)
        line = re.sub(r"\$\([^)]*\)", "SUBSTITUTED", line)
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, ";"]:
            if word in (";", "&&", "||", "|"):
                check_command(command, block)
                command = []
            else:
                command.append(word)


# Configs ------------------------------------------------------------------------------------


def errors_of(config: dict[str, str]) -> dict[str, list[str]]:
    from airflow_provider_connect.control.validation import validate_connector_config

    infos = validate_connector_config(config)
    return {
        c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]
    }


def check_connector_config(config: dict[str, str], expected: set[str]) -> None:
    errors = errors_of(config)
    assert set(errors) == expected, f"errors {errors}, expected on {sorted(expected)}"


def check_connector_json(value: Any, expected: set[str]) -> None:
    assert isinstance(value, dict), "a JSON connector config is an object"
    # A config, or REST's create body: a name and a config.
    config = {"name": value["name"], **value["config"]} if "config" in value else value
    assert "connector.class" in config, "a JSON block must be a connector config or create body"
    check_connector_config({k: str(v) for k, v in config.items()}, expected)


WORKER_PREFIXES = (
    "producer.",
    "consumer.",
    "admin.",
    "spark.",
    "config.providers.",
    "ssl.",
    "listeners.https.",
    "listeners.http.",
    "key.converter.",
    "value.converter.",
    "header.converter.",
)
"""Worker keys passed on whole: to the Kafka clients, Spark, the config providers, the HTTPS
listeners and the converters."""


def check_worker_config(props: dict[str, str], block: Block) -> None:
    workers = worker_config_module()
    names = set(workers.WORKER_CONFIG_DEF.names())
    unknown = [k for k in props if k not in names and not k.startswith(WORKER_PREFIXES)]
    assert not unknown, f"{block.where}: not worker config keys: {unknown}"
    workers.WorkerConfig(props)  # parses: types, enums, validators
    from airflow_provider_connect.connect.plugins import load_class

    for key, value in props.items():
        if key.endswith((".class", ".classes", "converter")):
            for name in value.split(","):
                try:
                    load_class(name.strip())
                except ImportError:  # not a plugin: a name the runtime knows itself
                    simple = name.strip().rsplit(".", 1)[-1]
                    assert simple in package_source(), f"{block.where}: {key}={name}: unknown"


def read_properties(code: str) -> dict[str, str]:
    from jproperties import Properties

    properties = Properties()
    properties.load(code.encode("utf-8"), "utf-8")
    return {k: v.data for k, v in properties.items()}


# The checks per language ---------------------------------------------------------------------


def expected_errors(block: Block) -> set[str]:
    value = marker_value(block, "expect errors")
    return set(value.split()) if value else set()


def check_properties(block: Block, tmp_path: Path) -> None:
    props = read_properties(block.code)
    assert props, f"{block.where}: no properties"
    if "connector.class" in props:
        check_connector_config(props, expected_errors(block))
    else:
        assert not expected_errors(block), "expect errors applies to connector configs"
        check_worker_config(props, block)


def check_json(block: Block, tmp_path: Path) -> None:
    check_connector_json(json.loads(block.code), expected_errors(block))


def exercised_by(block: Block) -> str | None:
    return marker_value(block, "exercised by")


def check_test_exists(node: str) -> None:
    file, _, name = node.partition("::")
    path = ROOT / file
    assert path.is_file() and name, f"no test file {file}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {
        n.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    missing_parts = [p for p in name.split("::") if p.split("[")[0] not in names]
    assert not missing_parts, f"{node}: no such test"


def check_python(block: Block, tmp_path: Path) -> None:
    node = exercised_by(block)
    if node:
        check_test_exists(node)
        compile(block.code, block.where, "exec")
        return
    code = compile("\n" * block.line + block.code, str(block.doc), "exec")
    exec(code, {"__name__": f"docs_example_{block.line}"})


def check_toml(block: Block, tmp_path: Path) -> None:
    from airflow_provider_connect.connect.plugins import PLUGIN_GROUPS

    parsed = tomllib.loads(block.code)
    for group, entries in parsed.get("project", {}).get("entry-points", {}).items():
        assert group in PLUGIN_GROUPS, f"{block.where}: {group} is no plugin group"
        for target in entries.values():
            assert re.fullmatch(r"[\w.]+:\w+", target), f"{target}: not module:attribute"


def check_yaml(block: Block, tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    yaml.safe_load(block.code)


def check_ini(block: Block, tmp_path: Path) -> None:
    configparser.ConfigParser().read_string(block.code)


def output_phrases(line: str) -> str | None:
    """A printed line's fixed beginning: its first three words, unless one holds a number."""
    words = re.sub(r"^\s*\d+\.\s+", "", line).split()
    fixed = []
    for word in words[:3]:
        if re.search(r"\d", word):
            return None
        fixed.append(word)
    return " ".join(fixed) if len(fixed) == 3 else None


def check_text(block: Block, tmp_path: Path) -> None:
    program = marker_value(block, "output of")
    absent = missing(module_tokens(block.code), module_or_attribute_exists)
    assert not absent, f"{block.where}: unknown modules: {absent}"
    if program is None:
        paths = path_tokens(block.code)
        absent = missing(paths, path_exists)
        assert not absent, f"{block.where}: not in the tree: {absent}"
        classes = set(re.findall(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b", block.code))
        unknown = sorted(c for c in classes if c not in package_source())
        assert not unknown, f"{block.where}: no such names in the package: {unknown}"
        return
    source = " ".join((ROOT / program).read_text(encoding="utf-8").split())
    for line in block.code.splitlines():
        if line.lstrip().startswith("{"):
            for key in json.loads(line):
                assert f'"{key}"' in source, f"{block.where}: {program} writes no {key!r}"
            continue
        phrase = output_phrases(line)
        if phrase:
            assert phrase in source, f"{block.where}: {program} no longer prints {phrase!r}"


CHECKS: dict[str, Callable[[Block, Path], None]] = {
    "python": check_python,
    "properties": check_properties,
    "json": check_json,
    "bash": lambda block, _: check_shell(block),
    "sh": lambda block, _: check_shell(block),
    "shell": lambda block, _: check_shell(block),
    "toml": check_toml,
    "yaml": check_yaml,
    "ini": check_ini,
    "text": check_text,
}


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.where}:{b.lang or 'untagged'}" for b in BLOCKS])
def test_code_block(block: Block, tmp_path: Path) -> None:
    assert block.lang in CHECKS, (
        f"{block.where}: a code block tagged {block.lang or 'nothing'!r}; "
        f"tag it with one of {sorted(CHECKS)} so that it is checked"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)  # what a block writes (a SQLite file, ...) stays there
        CHECKS[block.lang](block, tmp_path)


def test_every_kind_of_block_is_found() -> None:
    kinds = {b.lang for b in BLOCKS}
    assert {"python", "bash", "properties", "json", "text"} <= kinds
    assert sum(b.doc == README for b in BLOCKS) >= 3


# Links and pages -----------------------------------------------------------------------------


def without_blocks(text: str) -> str:
    return re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", "", text, flags=re.M | re.S)


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", without_blocks(text))


def without_code(text: str) -> str:
    return re.sub(r"`[^`]+`", "", without_blocks(text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(
        r"^#{1,6}\s+(.*)$", without_code(doc.read_text(encoding="utf-8")), re.M
    ):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(doc: Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", without_code(doc.read_text(encoding="utf-8")))


@pytest.mark.parametrize("doc", pages(), ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in links(doc):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(target)
            continue
        if anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(target)
    assert not broken, f"{doc.name}: links that resolve to nothing: {broken}"


@functools.cache
def ignored_paths() -> tuple[str, ...]:
    """What .gitignore keeps out of the tree (made by running things: .venv, bench/.quix-venv)."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return tuple(line.strip().rstrip("/") for line in lines if line.strip() and "*" not in line)


@pytest.mark.parametrize("doc", pages(), ids=lambda p: p.name)
def test_paths_and_modules_named_in_prose_exist(doc: Path) -> None:
    """The repository paths (``dags/connect_runtime.py``, ``runtime/entry/``) and modules
    (``airflow_provider_connect.…``) the text names in code spans exist."""
    from airflow_provider_connect.connect.plugins import PLUGIN_GROUPS

    spans = code_spans(doc.read_text(encoding="utf-8"))
    paths = sorted({t for s in spans for t in path_tokens(s) if "/" in t})
    paths = [p for p in paths if not p.rstrip("/").endswith(ignored_paths())]
    modules = sorted({m for s in spans for m in module_tokens(s) if m not in PLUGIN_GROUPS})
    absent = missing(paths, path_exists) + missing(modules, module_or_attribute_exists)
    assert not absent, f"{doc.name} names what is not there: {absent}"


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(README)}
    unlinked = [p.name for p in DOCS.glob("*.md") if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


OTHERS_PAGES = {"testing-connectors.md"}
"""Pages written elsewhere, to their own rules."""


@pytest.mark.parametrize(
    "doc",
    [p for p in sorted(DOCS.glob("*.md")) if p.name not in OTHERS_PAGES],
    ids=lambda p: p.name,
)
def test_a_docs_page_says_what_it_is_for_and_links_back(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    assert paragraphs[0].startswith("# "), f"{doc.name} starts with its title"
    assert paragraphs[1].startswith("I want to"), (
        f"{doc.name}: its first paragraph says who it is for"
    )
    assert "../README.md" in {t.partition("#")[0] for t in links(doc)}, (
        f"{doc.name} links to the README"
    )


def test_the_sink_connector_example_writes_what_it_is_given(tmp_path: Path) -> None:
    """connector-api.md's sink connector, run as the runtime runs it: task configs from the
    connector, records put, flushed, the task stopped."""
    from airflow_provider_connect.connect.connector import call_stop
    from airflow_provider_connect.connect.sink import SinkRecord, TopicPartition

    (block,) = [b for b in BLOCKS if "class JsonLinesSinkConnector" in b.code]
    namespace: dict[str, Any] = {}
    exec(compile("\n" * block.line + block.code, str(block.doc), "exec"), namespace)
    connector = namespace["JsonLinesSinkConnector"]()
    path = tmp_path / "out.jsonl"
    connector.start({"path": str(path), "topics": "orders"})
    (config,) = connector.task_configs(4)
    assert "path" in connector.config().names()
    task = connector.task_class()()
    task.start(config)
    task.put([SinkRecord("orders", 0, None, None, None, {"id": i}, i) for i in range(2)])
    task.flush({TopicPartition("orders", 0): 2})
    call_stop(task, False)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines == [{"topic": "orders", "offset": i, "value": {"id": i}} for i in range(2)]
