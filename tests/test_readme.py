"""The README opens with the two set-up commands and CI runs the second one verbatim."""

import re

from thatchlab.cli import app  # noqa: F401  (the CLI imports cleanly)


def _commands(root):
    text = (root / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)
    return text, blocks


def test_readme_starts_with_two_commands(repo_root):
    text, blocks = _commands(repo_root)
    head = text.split("\n## ")[0]
    assert head.count("```bash") == 2
    install, test = blocks[0], blocks[1]
    for cmd in (install, test):
        assert "\n" not in cmd
        assert "pip install -q torch==2.13.0" in cmd and cmd.index("torch==2.13.0") < cmd.index("-e '.[dev]'")
    assert "thatchlab " in install
    assert "pytest" in test and "--nbval" in test and "notebooks" in test
    assert "lint-imports" in test


def test_ci_runs_the_readme_test_command(repo_root):
    _, blocks = _commands(repo_root)
    ci = (repo_root / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == blocks[1]
