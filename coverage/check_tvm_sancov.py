"""Check that the installed TVM is the SanitizerCoverage build (run at the end of the tvm-cov image build).

Imports TVM, reads the counters registered with libseedzer_sancov.so, compiles a small TIR function
with LLVM and checks that it reached counters no import did. On the stock wheel it exits 1 with
"not instrumented".  Usage: python coverage/check_tvm_sancov.py [LIBSEEDZER_SANCOV]
"""

from __future__ import annotations

import ctypes
import sys

DEFAULT_LIB = "/opt/seedzer-sancov/lib/libseedzer_sancov.so"


def _counters(lib: ctypes.CDLL) -> tuple[int, int]:
    lib.seedzer_sancov_total.restype = ctypes.c_size_t
    lib.seedzer_sancov_covered.restype = ctypes.c_size_t
    return int(lib.seedzer_sancov_total()), int(lib.seedzer_sancov_covered())


def _compile_something() -> None:
    import numpy as np
    import tvm
    from tvm import te

    a = te.placeholder((64,), name="a", dtype="float32")
    b = te.compute((64,), lambda i: a[i] * 2.0 + 1.0, name="b")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "main")
    built = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    x = tvm.runtime.tensor(np.arange(64, dtype="float32"))
    y = tvm.runtime.tensor(np.zeros(64, dtype="float32"))
    built["main"](x, y)
    assert np.allclose(y.numpy(), np.arange(64) * 2.0 + 1.0)


def main(argv: list[str]) -> int:
    """Exit 0 when TVM's libraries register counters and a compile raises the covered count."""
    import tvm

    lib = ctypes.CDLL(argv[1] if len(argv) > 1 else DEFAULT_LIB)
    modules = lib.seedzer_sancov_modules()
    total, after_import = _counters(lib)
    if modules == 0 or total == 0:
        print(f"tvm {tvm.__version__} at {tvm.__file__} is not instrumented (no sancov counters)")
        return 1
    _compile_something()
    _, after_compile = _counters(lib)
    print(f"tvm {tvm.__version__}: {modules} instrumented objects, {total} counters, "
          f"{after_import} covered after import, {after_compile} after one LLVM compile")
    return 0 if after_compile > after_import else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
