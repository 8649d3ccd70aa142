from pathlib import Path

from seedzer.docs import END, START, render

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_config_reference_is_current() -> None:
    text = README.read_text()
    assert START in text and END in text
    assert render(text) == text, "README config reference is stale: run `python -m seedzer.docs`"


def test_readme_states_the_two_commands() -> None:
    text = README.read_text()
    assert "make run" in text and "make test" in text
