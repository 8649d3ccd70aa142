"""The Docker files agree with the CLI and the repository, checked without a Docker engine (docs/design.md §9).

Every command a compose service runs, as written and as the image's entrypoint expands it, is parsed
by the real ``seedzer`` CLI in dry-run mode (click's ``make_context``, recursively through the
subcommands: options are validated, nothing runs). Every path it names either lies in a named volume
(data: the pool fuzz reads must be one generate writes, report must read the campaigns' parent) or
is in the image through a ``COPY`` of a repository path that exists and that ``.dockerignore`` does
not drop. Variables the compose files use are documented in docs/docker.md.

The checks are functions of a compose file path (``check_compose``) and a Dockerfile path
(``check_dockerfile``) returning a list of problems; the tests run them on the real files and on
deliberately broken copies.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import click
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "docker.md"
COMPOSE_FILES = [REPO / "docker-compose.yml", REPO / "docker-compose.sancov.yml"]
INIT_WRAPPERS = (["tini", "--"], ["/usr/bin/tini", "--"])
HEURISTIC_SUFFIXES = (".yaml", ".yml", ".py")


def _cli() -> click.Group:
    try:
        from seedzer.cli import main
    except Exception as exc:  # the CLI module cannot even import: nothing to check commands against
        pytest.skip(f"seedzer.cli cannot be imported ({type(exc).__name__}: {exc})")
    return main


# ---- Dockerfile ------------------------------------------------------------------------------------


@dataclass
class Stage:
    """What the checks need of one build stage (inherited from its parent stage when FROM one)."""

    name: str
    parent: str | None
    workdir: str = "/"
    copies: list[tuple[list[str], str]] = field(default_factory=list)  # (repo sources, image dest)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)
    # RUN --mount options, each as a dict (type, source, from, id, ...), and the RUN it belongs to.
    mounts: list[tuple[dict[str, str], str]] = field(default_factory=list)
    args: dict[str, str | None] = field(default_factory=dict)  # ARG name -> default (None: none)
    runs: list[str] = field(default_factory=list)


def _run_mounts(args: str) -> tuple[list[dict[str, str]], str]:
    """The --mount options of a RUN (BuildKit) and the command after them."""
    mounts = []
    rest = args
    while rest.startswith("--"):
        flag, _, rest = rest.partition(" ")
        rest = rest.lstrip()
        if flag.startswith("--mount="):
            mounts.append(dict(kv.partition("=")[::2] for kv in flag[len("--mount="):].split(",")))
    return mounts, rest


def _instructions(text: str) -> Iterator[tuple[str, str]]:
    """(KEYWORD, arguments) of each instruction, continuation lines joined, comments dropped."""
    logical = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, rest = logical.partition(" ")
        yield keyword.upper(), rest.strip()
        logical = ""


def _exec_form(args: str) -> list[str]:
    return list(json.loads(args)) if args.startswith("[") else ["/bin/sh", "-c", args]


def parse_dockerfile(path: Path) -> dict[str, Stage]:
    """The stages of a Dockerfile by name (unnamed stages get their index as name)."""
    stages: dict[str, Stage] = {}
    stage: Stage | None = None
    for keyword, args in _instructions(path.read_text()):
        if keyword == "FROM":
            words = args.split()
            base = next(w for w in words if not w.startswith("--"))
            name = words[-1] if len(words) >= 3 and words[-2].upper() == "AS" else str(len(stages))
            parent = stages.get(base)
            stage = Stage(name, base if parent else None)
            if parent:
                stage.workdir, stage.entrypoint = parent.workdir, list(parent.entrypoint)
                stage.cmd, stage.healthcheck = list(parent.cmd), list(parent.healthcheck)
            stages[name] = stage
        elif stage is None:
            continue
        elif keyword == "WORKDIR":
            stage.workdir = str(PurePosixPath(stage.workdir) / args)
        elif keyword == "ENTRYPOINT":
            stage.entrypoint, stage.cmd = _exec_form(args), []
        elif keyword == "CMD":
            stage.cmd = _exec_form(args)
        elif keyword == "HEALTHCHECK":
            _, has_cmd, command = args.partition("CMD ")
            stage.healthcheck = _exec_form(command.strip()) if has_cmd else []
        elif keyword == "ARG":
            name, eq, default = args.partition("=")
            stage.args[name.strip()] = default.strip().strip('"') if eq else None
        elif keyword == "RUN":
            mounts, command = _run_mounts(args)
            stage.mounts += [(m, command) for m in mounts]
            stage.runs.append(args)
        elif keyword in ("COPY", "ADD"):
            words = shlex.split(args)
            if any(w.startswith("--from=") for w in words):
                continue  # from another stage, not from the repository
            paths = [w for w in words if not w.startswith("--")]
            dest = str(PurePosixPath(stage.workdir) / paths[-1]) + ("/" if paths[-1].endswith("/") else "")
            stage.copies.append((paths[:-1], dest))
    return stages


def _ancestry(stages: dict[str, Stage], target: str) -> list[Stage]:
    chain: list[Stage] = []
    name: str | None = target
    while name is not None:
        chain.append(stages[name])
        name = stages[name].parent
    return chain[::-1]


def image_to_repo(stages: dict[str, Stage], target: str, image_path: str, repo: Path) -> Path | None:
    """The repository path that a file of the target image comes from, or None if none was copied."""
    wanted = PurePosixPath(image_path)
    found: Path | None = None
    for stage in _ancestry(stages, target):
        for sources, dest in stage.copies:
            for source in sources:
                into_dir = dest.endswith("/") or len(sources) > 1 or (repo / source).is_dir()
                if (repo / source).is_dir():
                    base = PurePosixPath(dest)
                    if wanted == base or base in wanted.parents:
                        found = repo / source / wanted.relative_to(base)
                else:
                    file_dest = PurePosixPath(dest) / PurePosixPath(source).name if into_dir else dest
                    if wanted == PurePosixPath(file_dest):
                        found = repo / source
    return found


def _dockerignore(context: Path) -> list[tuple[bool, str]]:
    path = context / ".dockerignore"
    rules = []
    for line in path.read_text().splitlines() if path.exists() else []:
        line = line.strip()
        if line and not line.startswith("#"):
            negate = line.startswith("!")
            rules.append((negate, line.lstrip("!").strip("/")))
    return rules


def is_ignored(rel: str, rules: list[tuple[bool, str]]) -> bool:
    """Docker's rule: the last matching pattern wins; a pattern matching a directory drops its files."""
    parts = PurePosixPath(rel).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for negate, pattern in rules:
        regex = fnmatch.translate(pattern).replace(".*", "[^/]*").replace("[^/]*[^/]*", ".*")
        if pattern.startswith("**/"):
            regex = f"(?:.*/)?{fnmatch.translate(pattern[3:]).replace('.*', '[^/]*')}"
        if any(re.fullmatch(regex, p) for p in prefixes):
            ignored = not negate
    return ignored


def global_args(path: Path) -> dict[str, str | None]:
    """The ARGs declared before the first FROM (their defaults apply to every stage that redeclares them)."""
    found: dict[str, str | None] = {}
    for keyword, args in _instructions(path.read_text()):
        if keyword == "FROM":
            break
        if keyword == "ARG":
            name, eq, default = args.partition("=")
            found[name.strip()] = default.strip().strip('"') if eq else None
    return found


def check_dockerfile(dockerfile: Path, context: Path) -> list[str]:
    """Every COPY source and RUN --mount bind source of the build context exists, survives
    .dockerignore and is not an empty dir."""
    problems = []
    rules = _dockerignore(context)
    for stage in parse_dockerfile(dockerfile).values():
        context_mounts = [m["source"] for m, _ in stage.mounts
                          if m.get("type", "bind") == "bind" and "from" not in m and m.get("source")]
        sources = [("COPY", src) for srcs, _ in stage.copies for src in srcs]
        sources += [("RUN --mount", src) for src in context_mounts]
        for how, source in sources:
            what = f"{dockerfile.name} stage {stage.name}: {how} {source}"
            matches = sorted(context.glob(source.rstrip("/"))) if source.strip("./") else [context]
            if not matches:
                problems.append(f"{what}: no such path")
            for match in matches:
                rel = match.relative_to(context).as_posix()
                files = [f for f in match.rglob("*") if f.is_file()] if match.is_dir() else [match]
                kept = [f for f in files if not is_ignored(f.relative_to(context).as_posix(), rules)]
                if rel != "." and is_ignored(rel, rules):
                    problems.append(f"{what}: in .dockerignore")
                elif not kept:
                    problems.append(f"{what}: no files (an empty or ignored directory is absent from a clone)")
    return problems


# ---- compose files ---------------------------------------------------------------------------------

_VAR = re.compile(r"\$(?:\$|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?P<op>:?[-?])?(?P<arg>[^}]*)\}"
                  r"|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")


def interpolate(value: Any, env: dict[str, str], used: set[str]) -> Any:
    """Compose's variable substitution (${V}, ${V:-d}, ${V-d}, ${V:?e}, $V, $$) over a YAML tree."""
    if isinstance(value, dict):
        return {k: interpolate(v, env, used) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, used) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group("braced") or m.group("bare")
        used.add(name)
        op, arg = m.group("op") or "", m.group("arg") or ""
        if op in (":-", "-") and (name not in env or (op == ":-" and not env[name])):
            return str(interpolate(arg, env, used))
        if op in (":?", "?") and not env.get(name):
            raise ValueError(f"${{{name}}} is required: {arg}")
        return env.get(name, "")

    return _VAR.sub(sub, value)


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return over


def load_compose(files: list[Path], env: dict[str, str] | None = None) -> tuple[dict[str, Any], set[str]]:
    """The merged, interpolated compose model of ``files`` (later files override) and the variables used."""
    merged: dict[str, Any] = {}
    used: set[str] = set()
    for path in files:
        data = interpolate(yaml.safe_load(path.read_text()) or {}, env or {}, used)
        for service in (data.get("services") or {}).values():
            build = service.get("build") or {}
            if "context" in build:  # relative to the compose file
                build["context"] = str((path.parent / build["context"]).resolve())
        merged = _merge(merged, data)
    return merged, used


@dataclass
class Invocation:
    """One parsed seedzer command: the contexts from the root group down to the verb."""

    service: str
    argv: list[str]
    contexts: list[click.Context]

    @property
    def verb(self) -> str:
        return " ".join(c.info_name or "" for c in self.contexts[1:])


def parse_seedzer(argv: list[str]) -> list[click.Context]:
    """Parse ``seedzer ...`` with the real CLI without running it; raises click.UsageError if invalid."""
    main = _cli()
    if not argv or PurePosixPath(argv[0]).name != "seedzer":
        raise click.UsageError(f"not a seedzer command: {shlex.join(argv)}")
    with _relaxed_paths(main):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # what --version would print
                ctx = main.make_context("seedzer", list(argv[1:]))
        except click.exceptions.Exit as exc:  # an eager option such as --version or --help
            if exc.exit_code == 0:
                return []
            raise
        contexts = [ctx]
        cmd: click.Command = main
        while isinstance(cmd, click.Group):
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
            if not rest:
                raise click.UsageError(f"'{shlex.join(argv)}' names no subcommand of '{ctx.info_name}'")
            name, sub, rest = cmd.resolve_command(ctx, rest)
            assert sub is not None and name is not None
            ctx = sub.make_context(name, rest, parent=ctx)
            contexts.append(ctx)
            cmd = sub
    return contexts


@contextlib.contextmanager
def _relaxed_paths(group: click.Group) -> Iterator[None]:
    """Paths name files inside the container: do not let click look for them on this machine."""
    saved: list[tuple[click.Path, bool, bool]] = []

    def walk(cmd: click.Command) -> None:
        for param in cmd.params:
            if isinstance(param.type, click.Path):
                saved.append((param.type, param.type.exists, param.type.resolve_path))
                param.type.exists, param.type.resolve_path = False, False
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                walk(sub)

    walk(group)
    try:
        yield
    finally:
        for ptype, exists, resolve in saved:
            ptype.exists, ptype.resolve_path = exists, resolve


def _expand(argv: list[str], entrypoint: list[str], stages: dict[str, Stage], target: str) -> list[str]:
    """The command the container really runs: through the image's entrypoint script when it is ours."""
    for wrapper in INIT_WRAPPERS:
        if entrypoint[: len(wrapper)] == wrapper:
            entrypoint = entrypoint[len(wrapper):]
    if not entrypoint:
        return argv
    script = image_to_repo(stages, target, entrypoint[0], REPO)
    if script is None or not script.is_file():
        return entrypoint + argv
    out = subprocess.run(["bash", str(script), "--dry-run", *entrypoint[1:], *argv],
                         capture_output=True, check=True, timeout=30)
    return out.stdout.decode().split("\0")[:-1]


def _documented_variables() -> set[str]:
    return set(re.findall(r"`([A-Z][A-Z0-9_]+)`", DOCS.read_text())) if DOCS.exists() else set()


def check_compose(files: list[Path], dockerfile: Path = REPO / "Dockerfile",
                  env: dict[str, str] | None = None) -> tuple[list[str], list[Invocation]]:
    """Problems of the compose model built from ``files`` (later override earlier) and its invocations."""
    compose, used = load_compose(files, env)
    stages = parse_dockerfile(dockerfile)
    problems: list[str] = []
    invocations: list[Invocation] = []
    volumes = set(compose.get("volumes") or {})
    documented = _documented_variables()
    problems += [f"variable {v} is not documented in docs/docker.md" for v in sorted(used - documented)]

    for name, svc in (compose.get("services") or {}).items():
        build = svc.get("build") or {}
        target = build.get("target") or list(stages)[-1]
        if target not in stages:
            problems.append(f"{name}: build target '{target}' is not a stage of {dockerfile.name}")
            continue
        if build and Path(build.get("context", ".")).resolve() != dockerfile.parent.resolve():
            problems.append(f"{name}: build context {build.get('context')} is not {dockerfile.parent}")
        env_keys = svc.get("environment") or {}
        env_keys = [e.split("=")[0] for e in env_keys] if isinstance(env_keys, list) else list(env_keys)
        problems += [f"{name}: environment {k} is not documented" for k in env_keys if k not in documented]
        mounts = {}
        for vol in svc.get("volumes") or []:
            source, dest = str(vol).split(":")[:2]
            if source not in volumes:
                problems.append(f"{name}: volume {source} is not a named volume")
            mounts[dest] = source
        command = svc.get("command", stages[target].cmd)
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        entrypoint = svc.get("entrypoint", stages[target].entrypoint)
        entrypoint = shlex.split(entrypoint) if isinstance(entrypoint, str) else list(entrypoint)
        workdir = svc.get("working_dir", stages[target].workdir)
        try:
            expanded = _expand(argv, entrypoint, stages, target)
            variants = [argv] if expanded == argv else [argv, expanded]
        except subprocess.CalledProcessError as exc:
            problems.append(f"{name}: the entrypoint rejects {shlex.join(argv)}: {exc.stderr.decode()}")
            continue
        if PurePosixPath(argv[0]).name == "ray" if argv else False:
            try:
                invocations.append(Invocation(name, argv, parse_ray(argv)))
            except click.UsageError as exc:
                problems.append(f"{name}: {shlex.join(argv)}: {exc.format_message()}")
            continue
        if expanded[1:2] == ["fuzz"] and "--resume" not in expanded:
            variants.append([*expanded, "--resume"])  # what a restarted replica runs
        for variant in variants:
            try:
                contexts = parse_seedzer(variant)
            except click.UsageError as exc:
                problems.append(f"{name}: {shlex.join(variant)}: {exc.format_message()}")
                continue
            invocations.append(Invocation(name, variant, contexts))
            problems += _check_paths(name, contexts, workdir, mounts, stages, target)
    targets = {(svc.get("build") or {}).get("target") or list(stages)[-1]
               for svc in (compose.get("services") or {}).values()}
    for target in sorted(t for t in targets if t in stages and stages[t].healthcheck):
        try:
            parse_seedzer(stages[target].healthcheck)
        except click.UsageError as exc:
            problems.append(f"{target} HEALTHCHECK {shlex.join(stages[target].healthcheck)}: "
                            f"{exc.format_message()}")
    return problems + _check_data_flow(invocations) + _check_ray_cluster(invocations), invocations


def parse_ray(argv: list[str]) -> list[click.Context]:
    """Parse ``ray start ...`` with Ray's own CLI (the ``ray`` extra) without running it."""
    from ray.scripts.scripts import cli

    ctx = cli.make_context("ray", list(argv[1:]))
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    name, sub, rest = cli.resolve_command(ctx, rest)
    assert sub is not None and name is not None
    if name != "start":
        raise click.UsageError(f"only `ray start` runs in a service, not `ray {name}`")
    return [ctx, sub.make_context(name, rest, parent=ctx)]


def _check_ray_cluster(invocations: list[Invocation]) -> list[str]:
    """Ray nodes join a head service at its port; ``seedzer ... --ray HOST:PORT`` names a head."""
    heads, problems = {}, []
    for inv in invocations:
        if inv.verb == "start" and inv.contexts[-1].params.get("head"):
            heads[inv.service] = str(inv.contexts[-1].params.get("port") or 6379)
    for inv in invocations:
        params = inv.contexts[-1].params if inv.contexts else {}
        address = params.get("address") if inv.verb == "start" else params.get("ray_address")
        if inv.verb == "start" and not params.get("head") and not address:
            problems.append(f"{inv.service}: `ray start` is neither --head nor --address")
        if address:
            host, _, port = str(address).rpartition(":")
            if heads.get(host) != port:
                problems.append(f"{inv.service}: joins {address}, which is no ray head service's address "
                                f"({', '.join(f'{h}:{p}' for h, p in heads.items()) or 'none'})")
    return problems


def _check_paths(service: str, contexts: list[click.Context], workdir: str, mounts: dict[str, str],
                 stages: dict[str, Stage], target: str) -> list[str]:
    """Path parameters lie in a volume (data) or come from the repository through a COPY."""
    problems = []
    for ctx in contexts:
        for param in ctx.command.params:
            value = ctx.params.get(param.name or "")
            if value is None:
                continue
            if param.name == "heuristic" and "/" not in str(value) and "." not in str(value):
                if not any((REPO / "heuristics" / f"{value}{s}").is_file() for s in HEURISTIC_SUFFIXES):
                    problems.append(f"{service}: heuristic '{value}' is not in heuristics/")
                continue
            if not (isinstance(param.type, click.Path) or param.name == "heuristic"):
                continue
            in_image = str(PurePosixPath(workdir) / str(value))
            if any(in_image == m or in_image.startswith(m + "/") for m in mounts):
                continue  # data in a volume
            if param.name == "out":
                problems.append(f"{service}: output {value} ({in_image}) is not in a volume: "
                                "it would be lost with the container")
                continue
            source = image_to_repo(stages, target, in_image, REPO)
            if source is None or not source.exists():
                problems.append(f"{service}: {param.name} {value} ({in_image}) is neither in a volume "
                                "nor copied into the image from the repository")
            elif param.name == "config_path":
                from seedzer.config import load_config
                from seedzer.errors import SeedzerError

                try:
                    load_config(source)
                except SeedzerError as exc:
                    problems.append(f"{service}: config {value}: {exc}")
    return problems


def _param(inv: Invocation, kind: type[click.Parameter], name: str | None = None) -> str | None:
    ctx = inv.contexts[-1]
    for param in ctx.command.params:
        if isinstance(param, kind) and (name is None or param.name == name):
            value = ctx.params.get(param.name or "")
            return None if value is None else str(PurePosixPath(str(value)))
    return None


def _check_data_flow(invocations: list[Invocation]) -> list[str]:
    """fuzz reads a pool that generate writes; report reads the directory the campaigns are in."""
    by_verb: dict[str, list[Invocation]] = {}
    for inv in invocations:
        by_verb.setdefault(inv.verb, []).append(inv)
    pools = {_param(i, click.Option, "out") for i in by_verb.get("generate", [])}
    campaigns = {_param(i, click.Option, "out") for i in by_verb.get("fuzz", [])}
    problems = [f"{i.service}: pool {_param(i, click.Option, 'pool')} is not written by any generate service"
                for i in by_verb.get("fuzz", []) if pools and _param(i, click.Option, "pool") not in pools]
    for inv in by_verb.get("report", []):
        results = _param(inv, click.Argument)
        if campaigns and not any(results and PurePosixPath(results) in PurePosixPath(c or "").parents
                                 for c in campaigns):
            problems.append(f"{inv.service}: report reads {results}, which holds none of the campaigns "
                            f"{sorted(c or '' for c in campaigns)}")
    return problems


# ---- tests -----------------------------------------------------------------------------------------


def test_dockerfile_copies_exist_and_survive_dockerignore() -> None:
    assert check_dockerfile(REPO / "Dockerfile", REPO) == []


def test_dockerfile_has_both_targets_and_a_seedzer_healthcheck() -> None:
    stages = parse_dockerfile(REPO / "Dockerfile")
    assert {"runtime", "tvm-cov", "tvm-build"} <= set(stages)
    assert list(stages)[-1] == "runtime", "a plain `docker build .` must not take the 50-minute sancov build"
    for target in ("runtime", "tvm-cov"):
        assert stages[target].healthcheck[:1] == ["seedzer"]
        assert image_to_repo(stages, target, "/usr/local/bin/seedzer-entrypoint", REPO) == \
            REPO / "docker" / "entrypoint.sh"


def test_dockerfile_pulls_nothing_but_its_base_image() -> None:
    """Offline, BuildKit can pull nothing: no `# syntax=` frontend image, no FROM or --mount from= of an
    image other than the base, which is the build argument PYTHON_IMAGE (docker/base-image.sh)."""
    text = (REPO / "Dockerfile").read_text()
    assert not re.search(r"^#\s*syntax\s*=", text, re.MULTILINE | re.IGNORECASE), \
        "a `# syntax=` line makes BuildKit pull a frontend image"
    stages = parse_dockerfile(REPO / "Dockerfile")
    external = {line.split()[1] for line in text.splitlines() if line.startswith("FROM ")} - set(stages)
    assert external == {"${PYTHON_IMAGE}"}, external
    for stage in stages.values():
        for mount, _ in stage.mounts:
            assert mount.get("from", stage.name) in stages, f"{stage.name}: mount from the image {mount['from']}"


def test_build_arguments_default_to_an_online_machine() -> None:
    defaults = global_args(REPO / "Dockerfile")
    stages = parse_dockerfile(REPO / "Dockerfile")
    assert str(defaults["PYTHON_IMAGE"]).startswith("python:3.11"), "the official Python image"
    assert defaults["PIP_INDEX_URL"] == "https://pypi.org/simple"
    assert stages["deps"].args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    # docker/base-image.sh and docker/build.sh read these defaults from the Dockerfile.
    assert re.search(r"^ARG PYTHON_IMAGE=\S+$", (REPO / "Dockerfile").read_text(), re.MULTILINE)
    assert stages["deps"].args["TORCH_VERSION"] == "2.13.0"


def test_every_pip_run_gets_the_ca_bundle_and_the_index() -> None:
    """pip reaches the index through a TLS proxy only with its CA bundle (the secret pip_cert), and an
    ARG is only seen by the stage that declares it: each stage that runs pip declares PIP_INDEX_URL."""
    for stage in parse_dockerfile(REPO / "Dockerfile").values():
        for run in stage.runs:
            mounts, command = _run_mounts(run)
            if not re.search(r"\bpip (install|wheel)\b", command):
                continue
            if re.search(r"\bpip install --no-cache-dir /tmp/wheels/apache_tvm", command) is None:
                assert {"type": "secret", "id": "pip_cert"} in mounts, f"{stage.name}: {command[:80]}"
                assert "PIP_CERT=/run/secrets/pip_cert" in command, f"{stage.name}: {command[:80]}"
            assert "PIP_INDEX_URL" in stage.args, f"{stage.name} runs pip without ARG PIP_INDEX_URL"


def _machine_specific_values() -> set[str]:
    """Paths and hosts of this machine's pip and apt set-up (what the scripts must discover, not name)."""
    import os
    import sys
    from urllib.parse import urlparse

    values: set[str] = set()
    for key, value in os.environ.items():
        if key.startswith("PIP_"):
            values.update(value.split())
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        values.update(line.partition("=")[2].strip("'").split())
    apt = [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*.sources")]
    for source in apt:
        if source.is_file():
            values.update(re.findall(r"https?://[^\s/]+", source.read_text()))
    found = set()
    for value in values:
        if value.startswith(("http://", "https://", "file://")):
            host = urlparse(value).netloc
            if host and host not in ("pypi.org", "files.pythonhosted.org", "download.pytorch.org"):
                found.add(host)
            elif value.startswith("file://"):
                found.add(value[len("file://"):])
        elif value.startswith("/") and len(value) > 1:
            found.add(value)
    return found


def test_no_path_or_host_of_this_machine_in_the_docker_files() -> None:
    files = [REPO / "Dockerfile", REPO / ".dockerignore", *COMPOSE_FILES, REPO / "scripts" / "docker_e2e.sh",
             *sorted((REPO / "docker").iterdir())]
    values = _machine_specific_values()
    for path in files:
        if path.is_file():
            text = path.read_text()
            named = sorted(v for v in values if v in text)
            assert not named, f"{path.relative_to(REPO)} names {named}: discover them at run time"


def test_compose_runs_two_fuzz_replicas_by_default() -> None:
    services = load_compose(COMPOSE_FILES[:1])[0]["services"]
    assert services["fuzz"]["deploy"]["replicas"] == 2


def _fake_client(directory: Path, version: str, buildx: bool) -> None:
    directory.mkdir()
    client = directory / "docker"
    client.write_text("#!/bin/sh\n"
                      f'if [ "$1" = buildx ]; then exit {0 if buildx else 1}; fi\n'
                      f'if [ "$1" = version ]; then echo {version}; exit 1; fi\n'  # no daemon: exit 1
                      "exit 1\n")
    client.chmod(0o755)


@pytest.mark.parametrize(("clients", "picked"), [
    ([("new", "28.2.2", False), ("engine", "20.10.24+dfsg1", False)], "engine"),  # this kind of machine
    ([("new", "28.2.2", True), ("engine", "20.10.24+dfsg1", False)], "new"),  # Docker CE with buildx
    ([("new", "28.2.2", False)], None),  # only the legacy builder: cannot build the Dockerfile
], ids=["engine-client", "buildx", "none"])
def test_engine_picks_a_client_that_builds_with_buildkit(tmp_path: Path, clients: list[tuple[str, str, bool]],
                                                         picked: str | None) -> None:
    import os

    for name, version, buildx in clients:
        _fake_client(tmp_path / name, version, buildx)
    path = ":".join(str(tmp_path / name) for name, _, _ in clients)  # no other docker on it
    bash = shutil.which("bash") or "/bin/bash"
    env = {**{k: v for k, v in os.environ.items() if k != "DOCKER"}, "PATH": path}
    out = subprocess.run([bash, "-c", 'source docker/engine.sh && engine_pick_docker && echo "$DOCKER"'],
                         cwd=REPO, capture_output=True, text=True, timeout=30, env=env)
    if picked is None:
        assert out.returncode != 0 and "no docker client that builds with BuildKit" in out.stderr
    else:
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str(tmp_path / picked / "docker")


@pytest.mark.parametrize("script", ["docker/base-image.sh", "docker/build.sh"])
def test_docker_scripts_explain_themselves(script: str) -> None:
    out = subprocess.run(["bash", script, "--help"], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "Usage:" in out.stdout, out.stderr


@pytest.mark.parametrize("files", [COMPOSE_FILES[:1], COMPOSE_FILES], ids=["base", "with-sancov"])
def test_compose_commands_are_valid_seedzer_invocations(files: list[Path]) -> None:
    problems, invocations = check_compose(files)
    assert not problems, "\n".join(problems)
    assert {i.verb for i in invocations} >= {"generate", "fuzz", "report"}


def test_compose_commands_valid_with_every_variable_set() -> None:
    env = {"SEEDZER_HEURISTIC": "basic", "SEEDZER_POOL_SIZE": "7", "SEEDZER_POOL_SEED": "3",
           "SEEDZER_CAMPAIGN": "night", "SEEDZER_MINUTES": "5", "SEEDZER_JOBS": "2",
           "SEEDZER_CONFIG": "docker/seedzer.yaml", "SEEDZER_REPORT_PERIOD": "30"}
    problems, invocations = check_compose(COMPOSE_FILES[:1], env=env)
    assert not problems, "\n".join(problems)
    _, used = load_compose(COMPOSE_FILES)
    assert used == set(env), "the test's variables are out of date with the compose file"
    fuzz = next(i for i in invocations if i.verb == "fuzz" and "{replica}" not in shlex.join(i.argv))
    assert fuzz.contexts[-1].params["out"] == Path("experiments/results/night/basic/trial-1")


def test_sancov_override_uses_the_tvm_cov_image() -> None:
    compose, _ = load_compose(COMPOSE_FILES)
    for name, svc in compose["services"].items():
        assert svc["build"]["target"] == "tvm-cov", name
        assert svc["image"].endswith("tvm-cov"), name


def _broken(tmp_path: Path, mutate: Any) -> list[str]:
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    for svc in data["services"].values():
        svc["build"]["context"] = str(REPO)
    mutate(data["services"])
    path = tmp_path / "docker-compose.yml"
    path.write_text(yaml.safe_dump(data))
    problems, _ = check_compose([path])
    return problems


FUZZ_OUT = "experiments/results/${SEEDZER_CAMPAIGN:-docker}/${SEEDZER_HEURISTIC:-basic}/trial-{replica}"


def _with(service: str, **changes: Any) -> Any:
    def mutate(services: dict[str, Any]) -> None:
        command = list(services[service]["command"])
        for old, new in changes.pop("replace", {}).items():
            command = [new if a == old else a for a in command]
        services[service].update(command=changes.pop("command", command), **changes)
    return mutate


@pytest.mark.parametrize(("mutation", "expected"), [
    (_with("fuzz", replace={"fuzz": "fuzzz"}), "No such command 'fuzzz'"),
    (_with("fuzz", replace={"--minutes": "--minutez"}), "No such option"),
    (_with("fuzz", replace={"${SEEDZER_CONFIG:-docker/seedzer.yaml}": "docker/nope.yaml"}),
     "config_path docker/nope.yaml (/data/docker/nope.yaml) is neither in a volume nor copied"),
    (_with("generate", replace={"${SEEDZER_HEURISTIC:-basic}": "no-such-heuristic"}),
     "heuristic 'no-such-heuristic' is not in heuristics/"),
    (_with("fuzz", replace={"seedpools/${SEEDZER_HEURISTIC:-basic}": "seedpools/other"}),
     "pool seedpools/other is not written by any generate service"),
    (_with("fuzz", replace={FUZZ_OUT: "/tmp/basic-{replica}"}),
     "output /tmp/basic-{replica} (/tmp/basic-{replica}) is not in a volume"),
    (_with("report", replace={"experiments/results/${SEEDZER_CAMPAIGN:-docker}": "experiments/elsewhere"}),
     "report reads experiments/elsewhere, which holds none of the campaigns"),
    (_with("fuzz", replace={"${SEEDZER_JOBS:-1}": "${SEEDZER_SECRET:-2}"}),
     "variable SEEDZER_SECRET is not documented"),
    (_with("fuzz", build={"context": str(REPO), "target": "gpu"}), "build target 'gpu' is not a stage"),
    (_with("fuzz", command="python -c 'print(1)'"), "not a seedzer command"),
    (_with("ray-worker", replace={"--address=ray-head:6379": "--address=ray-hed:6379"}),
     "ray-worker: joins ray-hed:6379, which is no ray head service's address (ray-head:6379)"),
    (_with("ray-experiment", replace={"ray-head:6379": "ray-head:6380"}),
     "ray-experiment: joins ray-head:6380, which is no ray head service's address"),
    (_with("ray-head", replace={"--port=6379": "--prot=6379"}), "No such option"),
    (_with("ray-worker", replace={"start": "stop"}), "only `ray start` runs in a service"),
], ids=["unknown-verb", "unknown-option", "missing-config", "missing-heuristic", "pool-not-generated",
        "output-not-in-volume", "report-elsewhere", "undocumented-variable", "unknown-target", "not-seedzer",
        "ray-wrong-head", "ray-driver-wrong-port", "ray-unknown-option", "ray-not-start"])
def test_broken_compose_files_fail_the_checks(tmp_path: Path, mutation: Any, expected: str) -> None:
    problems = _broken(tmp_path, mutation)
    assert any(expected in p for p in problems), problems


def test_broken_dockerfile_fails_the_checks(tmp_path: Path) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "a.txt").write_text("a")
    (tmp_path / "dropped").mkdir()
    (tmp_path / "dropped" / "b.txt").write_text("b")
    (tmp_path / "empty").mkdir()
    (tmp_path / ".dockerignore").write_text("dropped\n")
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.11.13-slim-bookworm AS s\nCOPY kept/ /k/\nCOPY dropped/ /d/\nCOPY empty/ /e/\n"
        "COPY missing.txt /m\n")
    problems = check_dockerfile(tmp_path / "Dockerfile", tmp_path)
    assert len(problems) == 3, problems
    assert "in .dockerignore" in problems[0] and "no files" in problems[1] and "no such path" in problems[2]


def test_broken_dockerfile_mounts_fail_the_checks(tmp_path: Path) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / ".gitignore").write_text("*\n!.gitignore\n")
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.11.13-slim-bookworm AS s\n"
        "RUN --mount=type=secret,id=pip_cert --mount=type=bind,source=wheels,target=/w true\n"
        "RUN --mount=type=bind,source=missing,target=/m true\n"
        "RUN --mount=type=bind,from=s,source=/anything,target=/a true\n")
    problems = check_dockerfile(tmp_path / "Dockerfile", tmp_path)
    assert problems == ["Dockerfile stage s: RUN --mount missing: no such path"], problems


@pytest.mark.parametrize(("rel", "ignored"), [
    ("seedpools/basic/m.onnx", True), ("seedpools", False), ("experiments/results/x/campaign.db", True),
    ("experiments/smoke.yaml", False), ("seedzer/cli.py", False), ("seedzer/__pycache__/a.pyc", True),
    (".venv/bin/python", True), ("heuristics/basic.yaml", False), ("tests/unit/x.py", True),
    ("docker/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", False),
])
def test_dockerignore_keeps_sources_and_drops_data(rel: str, ignored: bool) -> None:
    assert is_ignored(rel, _dockerignore(REPO)) is ignored


def test_documented_variables_are_the_ones_compose_uses() -> None:
    _, used = load_compose(COMPOSE_FILES)
    documented = _documented_variables()
    assert used <= documented
    assert {v for v in documented if v.startswith("SEEDZER_")} <= used, "documented but unused"


def test_the_ray_profile_runs_an_experiment_on_a_cluster_of_containers() -> None:
    services = load_compose(COMPOSE_FILES[:1])[0]["services"]
    ray = {name for name, svc in services.items() if "ray" in (svc.get("profiles") or [])}
    assert ray == {"ray-head", "ray-worker", "ray-experiment"}, "plain `up` starts none of them"
    assert "container_name" not in services["ray-worker"] and services["ray-worker"]["deploy"]["replicas"] == 2
    problems, invocations = check_compose(COMPOSE_FILES[:1])
    assert not problems, problems
    driver = next(i for i in invocations if i.service == "ray-experiment")
    assert driver.verb == "experiment run" and driver.contexts[-1].params["ray_address"] == "ray-head:6379"
    # the image has Ray: the deps stage installs the extra's pins from pyproject.toml
    deps = " ".join(parse_dockerfile(REPO / "Dockerfile")["deps"].runs)
    assert "['optional-dependencies']['ray']" in deps


def test_services_restart_and_start_in_order() -> None:
    services = load_compose(COMPOSE_FILES[:1])[0]["services"]
    assert services["generate"]["restart"] == "no"
    assert services["fuzz"]["restart"] == "on-failure:5", "bounded: a user error exits 2 every time"
    assert services["report"]["restart"] == "unless-stopped"
    assert services["fuzz"]["depends_on"]["generate"]["condition"] == "service_completed_successfully"
    assert "container_name" not in services["fuzz"], "a fixed name forbids --scale fuzz=N"


# ---- the entrypoint, run for real with a fake seedzer ----------------------------------------------

ENTRYPOINT = REPO / "docker" / "entrypoint.sh"


def _fake_seedzer(tmp_path: Path) -> dict[str, str]:
    """An environment whose `seedzer` prints its arguments, then sleeps $FAKE_SLEEP seconds."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "seedzer"
    fake.write_text('#!/bin/sh\nprintf \'%s\\n\' "$@"\nexec sleep "${FAKE_SLEEP:-0}"\n')
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def _fuzz_args(root: Path) -> list[str]:
    return ["seedzer", "fuzz", "--pool", "p", "--out", f"{root}/basic-{{replica}}", "--minutes", "1"]


def test_entrypoint_gives_each_running_replica_its_own_campaign(tmp_path: Path) -> None:
    env = _fake_seedzer(tmp_path)
    first = subprocess.Popen(["bash", str(ENTRYPOINT), *_fuzz_args(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env={**env, "FAKE_SLEEP": "30"}, text=True)
    try:
        assert first.stdout is not None
        first_args = [first.stdout.readline().strip() for _ in range(6)]  # it now holds its lock
        second = subprocess.run(["bash", str(ENTRYPOINT), *_fuzz_args(tmp_path)], capture_output=True,
                                env=env, text=True, timeout=30, check=True)
    finally:
        first.kill()
        first.wait()
    assert first_args[4] == f"{tmp_path}/basic-1"
    assert f"{tmp_path}/basic-2" in second.stdout.split()
    again = subprocess.run(["bash", str(ENTRYPOINT), *_fuzz_args(tmp_path)], capture_output=True,
                           env=env, text=True, timeout=30, check=True)
    assert f"{tmp_path}/basic-1" in again.stdout.split(), "a stopped replica's number is free again"


def test_entrypoint_resumes_an_existing_campaign_once(tmp_path: Path) -> None:
    env = _fake_seedzer(tmp_path)

    def run(*args: str) -> list[str]:
        out = subprocess.run(["bash", str(ENTRYPOINT), *args], capture_output=True, env=env, text=True,
                             timeout=30, check=True)
        return out.stdout.split()

    assert "--resume" not in run(*_fuzz_args(tmp_path))
    (tmp_path / "basic-1").mkdir(exist_ok=True)
    (tmp_path / "basic-1" / "campaign.db").write_text("")
    assert run(*_fuzz_args(tmp_path)).count("--resume") == 1
    assert run(*_fuzz_args(tmp_path), "--resume").count("--resume") == 1
    assert "--resume" not in run("seedzer", "status", f"{tmp_path}/basic-1")


def test_entrypoint_rejects_a_replica_directory_it_cannot_lock(tmp_path: Path) -> None:
    env = _fake_seedzer(tmp_path)
    out = subprocess.run(["bash", str(ENTRYPOINT), "seedzer", "fuzz", "--out", f"{tmp_path}/{{replica}}/x"],
                         capture_output=True, env=env, text=True, timeout=30)
    assert out.returncode == 2 and "last path component" in out.stderr


def test_entrypoint_joins_the_ray_cluster_a_driver_names(tmp_path: Path) -> None:
    env = _fake_seedzer(tmp_path)
    calls = tmp_path / "ray-calls.txt"
    fake_ray = tmp_path / "bin" / "ray"  # `ray status` finds no local node; `ray start` records its arguments
    fake_ray.write_text(f'#!/bin/sh\nif [ "$1" = status ]; then exit 1; fi\necho "$@" >> {calls}\n')
    fake_ray.chmod(0o755)

    def run(*args: str) -> list[str]:
        out = subprocess.run(["bash", str(ENTRYPOINT), "seedzer", "experiment", "run", "e.yaml", *args],
                             capture_output=True, env=env, text=True, timeout=30, check=True)
        return out.stdout.split()

    assert run("--ray", "ray-head:6379")[-2:] == ["--ray", "ray-head:6379"]
    assert calls.read_text().splitlines() == ["start --address=ray-head:6379 --num-cpus=0 --disable-usage-stats"]
    run("--ray=10.0.0.1:6380")
    assert calls.read_text().splitlines()[-1].startswith("start --address=10.0.0.1:6380 ")
    run("--ray")  # bare: the cluster of this machine, nothing to join
    run()
    assert len(calls.read_text().splitlines()) == 2
