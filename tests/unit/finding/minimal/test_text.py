"""The pieces of a plain reproducer: the mark it looks for in an error, and checks that compile."""

from __future__ import annotations

import pytest

from seedzer.finding.minimal import text as parts
from seedzer.finding.minimal.text import Docs, error_mark


@pytest.mark.parametrize(("message", "mark"), [
    ("TypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types. int64 vs. int32",
     "Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types"),
    ("InternalError: Check failed: lanes > 1 (1 vs. 1) : ", "Check failed: lanes >"),
    ("ValueError: In-place index 0 is out of range (must be between -1 and 0, inclusive, but is 1)",
     "is out of range (must be between"),
])
def test_the_mark_is_the_longest_part_that_never_varies(message: str, mark: str) -> None:
    assert error_mark(message) == mark


def test_the_irs_own_names_are_never_part_of_the_mark() -> None:
    message = "InternalError: Check failed: x is false: Inconsistent buffers T_where and A mapped to lv8 again"
    assert "T_where" in error_mark(message)
    assert "T_where" not in error_mark(message, {"T_where", "A"})


def test_a_program_of_every_check_is_python_with_the_guard_first() -> None:
    text = parts.program([parts.docstring(Docs("title", ("about",), "0.27.0.post1"), ["apache-tvm", "numpy"]),
                          parts.preamble(["import numpy as np"]),
                          parts.error_check(["x = 1"], "mark", "gone"),
                          parts.crash_check(["y = 2"], "gone"),
                          parts.outputs_check("e", "a", 1e-4, 1e-5, "agree")])
    compile(text, "minimal.py", "exec")
    assert "pip install apache-tvm==0.27.0.post1 numpy" in text
    lines = text.splitlines()
    assert lines.index(parts.GUARD) < lines.index("import numpy as np")


@pytest.mark.parametrize("message", [
    r"Check failed: path C:\Nope\x9 is \N{bad} at \u12",  # escapes a plain string literal would refuse
    'quotes """ and a trailing backslash \\',
    "a NUL \x00, a set-title \x1b]0;pwned\x07 and a\nsecond line",
])
def test_a_docstring_holding_any_message_compiles_and_shows_it(message: str) -> None:
    docs = Docs(f"Plain reproducer of a TVM bug: {message}", (message, message + "\\"), "0.27.0.post1")
    text = parts.program([parts.docstring(docs, ["apache-tvm"]), ["x = 1"]])
    code = compile(text, "minimal.py", "exec")
    shown = code.co_consts[0]
    assert isinstance(shown, str) and "\x00" not in shown and "\x1b" not in shown
    assert message.split("\\")[0].split('"""')[0].split("\x00")[0] in shown
    if "\\N" in message:
        assert r"C:\Nope\x9 is \N{bad} at \u12" in shown  # as the message wrote it
