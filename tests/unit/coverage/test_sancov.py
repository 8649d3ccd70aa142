"""The sancov reader and collector on a toy C++ library built here with clang and the recipe's flags."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from seedzer.coverage.collectors import CollectorSpec, make_collector
from seedzer.coverage.elf import ElfError, ElfFile
from seedzer.coverage.sancov import (
    DEFAULT_LIBRARY,
    SancovCollector,
    SancovError,
    SancovLibrary,
    check_instrumented,
    collector_spec,
    installed_tvm_libraries,
    module_name,
    new_edges,
)
from seedzer.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
CALLBACKS = REPO / "coverage" / "sancov_callbacks.c"
CMAKE_FLAGS = REPO / "coverage" / "cmake_flags.cmake"
CLANG = shutil.which("clang")
CLANGXX = shutil.which("clang++")
pytestmark = pytest.mark.skipif(CLANG is None or CLANGXX is None,
                                reason="clang/clang++ not installed (apt-get install clang)")

TOY = r"""
#include <string>
extern "C" int toy(int x) {
    if (x > 10) return x * 2;
    if (x < 0) return -x;
    return x + 1;
}
extern "C" int toy_text(const char *s) {
    std::string t(s);
    int n = 0;
    for (char c : t) {
        if (c == 'a') n += 1;
        else if (c == 'b') n += 10;
    }
    return n;
}
"""


def recipe_flag() -> str:
    """The -fsanitize-coverage flag exactly as cmake_flags.cmake gives it to TVM's objects."""
    match = re.search(r'set\(_seedzer_sancov "([^"]+)"\)', CMAKE_FLAGS.read_text())
    assert match, "cmake_flags.cmake no longer sets _seedzer_sancov"
    return match.group(1)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """libseedzer_sancov.so and libtoy.so (instrumented, linked to the callbacks like TVM is)."""
    work = tmp_path_factory.mktemp("sancov")
    callbacks = work / "libseedzer_sancov.so"
    subprocess.run([str(CLANG), "-O2", "-fPIC", "-shared", "-o", str(callbacks), str(CALLBACKS)], check=True)
    (work / "toy.cpp").write_text(TOY)
    toy = work / "libtoy.so"
    subprocess.run([str(CLANGXX), "-O1", "-fPIC", "-shared", recipe_flag(), "-o", str(toy), str(work / "toy.cpp"),
                    f"-L{work}", "-Wl,--no-as-needed", "-lseedzer_sancov", "-Wl,--as-needed",
                    f"-Wl,-rpath,{work}"], check=True)
    return callbacks, toy


@pytest.fixture(scope="module")
def loaded(built: tuple[Path, Path]) -> tuple[SancovLibrary, ctypes.CDLL]:
    """Both libraries loaded in this process, callbacks first with RTLD_GLOBAL."""
    callbacks, toy = built
    lib = SancovLibrary(callbacks)
    toy_lib = ctypes.CDLL(str(toy))
    toy_lib.toy_text.argtypes = [ctypes.c_char_p]
    return lib, toy_lib


def test_recipe_flag_is_the_one_tested() -> None:
    assert recipe_flag() == "-fsanitize-coverage=inline-8bit-counters,pc-table"


Loaded = tuple[SancovLibrary, ctypes.CDLL]


def test_reader_sees_the_module_and_its_pcs(loaded: Loaded, built: tuple[Path, Path]) -> None:
    lib, _ = loaded
    assert lib.n_modules() == 1
    module = lib.module(0)
    assert module.name == "toy" and Path(module.path).resolve() == built[1].resolve()
    n = len(module.counters)
    assert n == lib.total() and n >= 10 and module.pcs.shape == (n, 2)
    offsets = module.offsets()
    size = built[1].stat().st_size
    assert (offsets > 0).all() and (offsets < size).all(), "pcs are not inside libtoy.so"
    # every pc resolves, through dladdr, to libtoy.so; the pc of a function entry is flagged 1
    assert {Path(p).name for p in _dladdr_paths(module.pcs[:, 0])} == {"libtoy.so"}
    assert (module.pcs[:, 1] & 1).sum() >= 2  # toy and toy_text


def _dladdr_paths(pcs: np.ndarray) -> set[str]:
    from seedzer.coverage.sancov import _dladdr

    return {_dladdr(int(pc))[0] for pc in pcs}


def test_counters_are_zero_copy_and_grow_only_with_new_paths(loaded: tuple[SancovLibrary, ctypes.CDLL]) -> None:
    lib, toy = loaded
    counters = lib.module(0).counters  # one view, never re-read below
    assert not counters.flags.owndata and not counters.flags.writeable
    lib.reset()
    assert lib.covered() == 0 and not counters.any()
    toy.toy(1)
    one = lib.covered()
    assert one > 0 and np.count_nonzero(counters) == one
    before = counters.copy()
    toy.toy(1)
    assert lib.covered() == one, "a repeated path must not add edges"
    assert (counters >= before).all() and (counters != before).any(), "the view did not see the second call"
    toy.toy(20)
    toy.toy(-5)
    three = lib.covered()
    assert one < three <= lib.total()
    toy.toy_text(b"ab")
    assert lib.covered() > three
    lib.reset()
    assert lib.covered() == 0 and not counters.any()


def test_collector_reports_only_new_edges(loaded: tuple[SancovLibrary, ctypes.CDLL], built: tuple[Path, Path]) -> None:
    lib, toy = loaded
    lib.reset()
    collector = SancovCollector(built[0])
    collector.start()
    assert collector.take() == []
    toy.toy(1)
    first = collector.take()
    assert first and all(re.fullmatch(r"sc:toy:[0-9a-f]+", f) for f in first)
    assert len(set(first)) == len(first) == lib.covered()
    toy.toy(1)
    assert collector.take() == []
    toy.toy(20)
    second = collector.take()
    assert second and not set(second) & set(first)
    lib.reset()  # counters zeroed: known edges stay known
    toy.toy(1)
    toy.toy(20)
    assert collector.take() == []
    offsets = {int(f.rsplit(":", 1)[1], 16) for f in first + second}
    assert offsets <= set(lib.module(0).offsets().tolist())


def test_collector_registry_and_options(built: tuple[Path, Path], loaded: tuple[SancovLibrary, ctypes.CDLL]) -> None:
    collector = make_collector(CollectorSpec("sancov", {"library": str(built[0])}))
    assert isinstance(collector, SancovCollector) and collector.name == "sancov"
    collector.start()
    assert [m.name for m in collector.modules] == ["toy"]


def test_fork_child_has_its_own_counters(loaded: tuple[SancovLibrary, ctypes.CDLL], built: tuple[Path, Path]) -> None:
    lib, toy = loaded
    lib.reset()
    toy.toy(1)
    parent_before = lib.covered()
    collector = SancovCollector(built[0])
    collector.start()
    inherited = collector.take()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            toy.toy(20)
            toy.toy_text(b"b")
            msg = f"{lib.covered()} {len(collector.take())}"
        except BaseException as exc:
            msg = f"error {exc}"
        os.write(write, msg.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        child = f.read()
    os.waitpid(pid, 0)
    child_covered, child_new = (int(x) for x in child.split())
    assert child_covered > parent_before and child_new == child_covered - parent_before
    assert lib.covered() == parent_before, "the child's calls changed the parent's counters"
    assert len(inherited) == parent_before and collector.take() == []


def test_new_edges_marks_seen() -> None:
    counters = np.array([0, 3, 0, 1, 0, 0, 7, 0, 2], dtype=np.uint8)
    seen = np.zeros(9, dtype=bool)
    scratch = np.empty(9, dtype=bool)
    assert new_edges(counters, seen, scratch).tolist() == [1, 3, 6, 8]
    assert new_edges(counters, seen, scratch).tolist() == []
    counters[2] = 1
    counters[1] = 0
    assert new_edges(counters, seen, scratch).tolist() == [2]


def test_module_name() -> None:
    assert module_name("/x/libtvm_compiler.so") == "tvm_compiler"
    assert module_name("/x/libtvm_runtime.so.0.27") == "tvm_runtime"
    assert module_name("/x/python3.11") == "python3.11"


def test_missing_library_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SancovError, match=r"not found: TVM is not a sancov build") as info:
        SancovLibrary(tmp_path / "nope.so")
    assert "\n" not in str(info.value)
    with pytest.raises(SancovError, match=r"nope\.so"):
        SancovCollector(tmp_path / "nope.so").start()


def test_not_the_callbacks_library(tmp_path: Path, built: tuple[Path, Path]) -> None:
    other = tmp_path / "libother.so"
    (tmp_path / "o.c").write_text("int other(void) { return 1; }\n")
    subprocess.run([str(CLANG), "-fPIC", "-shared", "-o", str(other), str(tmp_path / "o.c")], check=True)
    with pytest.raises(SancovError, match=r"is not libseedzer_sancov\.so"):
        SancovLibrary(other)


def test_collector_without_instrumented_objects(tmp_path: Path) -> None:
    """A fresh callbacks library nobody registered with: start() says TVM is not a sancov build."""
    fresh = tmp_path / "libseedzer_sancov.so"
    subprocess.run([str(CLANG), "-O2", "-fPIC", "-shared", "-o", str(fresh), str(CALLBACKS)], check=True)
    with pytest.raises(SancovError, match=r"no instrumented library registered counters .* not a sancov build"):
        SancovCollector(fresh).start()


def test_check_instrumented_reads_elf_sections(built: tuple[Path, Path], tmp_path: Path) -> None:
    callbacks, toy = built
    assert {"__sancov_cntrs", "__sancov_pcs"} <= set(ElfFile(toy).sections)
    check_instrumented(callbacks, [toy])
    with pytest.raises(SancovError, match=r"libseedzer_sancov.so has no __sancov_cntrs section"):
        check_instrumented(callbacks, [callbacks])
    with pytest.raises(SancovError, match=r"not found"):
        check_instrumented(tmp_path / "missing.so", [toy])
    (tmp_path / "text.so").write_text("hello")
    with pytest.raises(ElfError, match=r"text\.so: not an ELF file"):
        check_instrumented(callbacks, [tmp_path / "text.so"])


def test_default_library_is_the_recipe_location() -> None:
    assert str(DEFAULT_LIBRARY.parent) in CMAKE_FLAGS.read_text()
    assert str(DEFAULT_LIBRARY.parent) in (REPO / "coverage" / "build_tvm_sancov.sh").read_text()


@pytest.mark.ci_may_skip  # skips only on a sancov build of TVM (the tvm-cov image), never for a missing tool
def test_stock_wheel_is_refused_in_one_line(built: tuple[Path, Path]) -> None:
    """The installed TVM (the stock PyPI wheel here) has no counters: one line naming the culprit."""
    tvm_libs = installed_tvm_libraries()
    assert [p.name for p in tvm_libs] == ["libtvm_compiler.so", "libtvm_runtime.so"]
    if "__sancov_cntrs" in ElfFile(tvm_libs[0]).sections:
        pytest.skip("the installed TVM is a sancov build (tvm-cov image): nothing to refuse")
    if not DEFAULT_LIBRARY.exists():
        with pytest.raises(SancovError, match=r"libseedzer_sancov\.so not found: TVM is not a sancov build"):
            collector_spec()
    with pytest.raises(SancovError, match=r"libtvm_compiler\.so has no __sancov_cntrs section: the installed TVM "
                                          r"is not a sancov build \(use the Docker 'tvm-cov' image") as info:
        collector_spec(built[0])
    assert "\n" not in str(info.value)
    spec = collector_spec(built[0], [built[1]])
    assert spec.name == "sancov" and spec.options == {"library": str(built[0])}


@pytest.mark.ci_may_skip  # skips only on a sancov build of TVM (the tvm-cov image), never for a missing tool
def test_campaign_refuses_sancov_on_the_stock_wheel(tmp_path: Path) -> None:
    """``fuzz.coverage: sancov`` with the stock wheel: the campaign's set-up stops with one line."""
    from seedzer.config import load_config
    from seedzer.coverage.native import prepare_collector

    if DEFAULT_LIBRARY.exists() and "__sancov_cntrs" in ElfFile(installed_tvm_libraries()[0]).sections:
        pytest.skip("the installed TVM is a sancov build (tvm-cov image): nothing to refuse")
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text("fuzz:\n  coverage: sancov\n")
    cfg = load_config(cfg_file)
    assert cfg.fuzz.coverage == "sancov"
    with pytest.raises(SancovError, match=r"^sancov: .*(not found|no __sancov_cntrs section).* not a sancov build "
                                          r"\(use the Docker 'tvm-cov' image") as info:
        prepare_collector("sancov", tmp_path, [], str(tmp_path), "blocks")
    assert "\n" not in str(info.value)
    cfg_file.write_text("fuzz:\n  coverage: sancovv\n")
    with pytest.raises(ConfigError, match=r"fuzz\.coverage"):
        load_config(cfg_file)
