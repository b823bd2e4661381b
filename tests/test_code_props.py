"""Property tests for memcore.code: identifier splitting, windows, chunk coverage."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.code import chunk_file, split_identifiers
from memcore.code.windows import window_ranges

words = st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=2, max_size=5)


def test_split_identifier_examples() -> None:
    assert split_identifiers("getUserName") == "get user name"
    assert split_identifiers("HTTPServerError") == "http server error"
    assert split_identifiers("parse_json2xml") == "parse json 2 xml"
    assert split_identifiers("MAX_RETRY_COUNT") == "max retry count"
    assert split_identifiers("--dry-run") == "dry run"
    assert split_identifiers("XMLHttpRequest $scopeId") == "xml http request scope id"
    assert split_identifiers("user_id userId UserID") == "user id"
    assert split_identifiers("return user 42") == ""


@given(words)
def test_snake_kebab_and_screaming_case_give_their_words(parts: list[str]) -> None:
    expected = list(dict.fromkeys(parts))
    assert split_identifiers("_".join(parts)).split() == expected
    assert split_identifiers("-".join(parts)).split() == expected
    assert split_identifiers("_".join(parts).upper()).split() == expected


@given(words)
def test_camel_and_pascal_case_give_their_words(parts: list[str]) -> None:
    expected = list(dict.fromkeys(parts))
    pascal = "".join(p.capitalize() for p in parts)
    assert split_identifiers(pascal).split() == expected
    assert split_identifiers(parts[0] + pascal[len(parts[0]) :]).split() == expected


@given(st.text(max_size=300))
def test_split_output_is_unique_lowercase_words_from_the_text(text: str) -> None:
    out = split_identifiers(text).split()
    assert len(out) == len(set(out))
    for word in out:
        assert word.isascii() and word.isalnum() and word == word.lower()
        assert word in text.lower()


@st.composite
def window_cases(draw: st.DrawFn) -> tuple[int, int, int, int, int]:
    max_lines = draw(st.integers(1, 80))
    window = draw(st.integers(1, max_lines))
    overlap = draw(st.integers(0, window - 1))
    start = draw(st.integers(0, 50))
    end = start + draw(st.integers(0, 400))
    return start, end, max_lines, window, overlap


@given(window_cases())
def test_windows_cover_the_range_in_bounded_overlapping_pieces(
    case: tuple[int, int, int, int, int],
) -> None:
    start, end, max_lines, window, overlap = case
    ranges = window_ranges(start, end, max_lines=max_lines, window=window, overlap=overlap)
    assert ranges[0][0] == start
    assert ranges[-1][1] == end
    assert all(last - first + 1 <= max_lines for first, last in ranges)
    for (first, last), (next_first, _) in pairwise(ranges):
        assert next_first == first + window - overlap  # steady stride...
        assert last - next_first + 1 == overlap  # ...sharing exactly `overlap` lines


lines = st.lists(st.from_regex(r"[ a-z0-9=()]{0,30}", fullmatch=True), max_size=300)


@given(lines, st.integers(5, 60))
def test_fallback_windows_cover_every_line(text_lines: list[str], max_lines: int) -> None:
    text = "\n".join(text_lines)
    window = max(1, max_lines // 2)
    chunks = chunk_file(
        text, "unknown", "f.txt", max_chunk_lines=max_lines, window=window, overlap=window // 3
    )
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    wanted = {n for n, line in enumerate(text_lines, start=1) if line.strip()}
    assert wanted <= covered
    assert all(c.end_line - c.start_line + 1 <= max_lines for c in chunks)


identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@st.composite
def python_modules(draw: st.DrawFn) -> tuple[str, set[tuple[str, str, str]]]:
    """A module of functions, classes with methods and statements, plus the definitions
    (type, name, parent scope) the chunker must find in it."""
    out: list[str] = []
    expected: set[tuple[str, str, str]] = set()
    for index in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["function", "class", "statement"]))
        name = f"{draw(identifiers)}_{index}"
        body = draw(st.integers(1, 30))
        if kind == "function":
            out += [f"def {name}(a):", *(f"    a += {i}" for i in range(body)), "    return a"]
            expected.add(("function", name, "module m.py"))
        elif kind == "class":
            out += [f"class {name.capitalize()}:", f'    """Class {index}."""']
            for method in range(draw(st.integers(0, 3))):
                out += [f"    def m{method}(self):", *(f"        x = {i}" for i in range(body))]
                expected.add(("method", f"m{method}", f"class {name.capitalize()}"))
            expected.add(("class", name.capitalize(), "module m.py"))
        else:
            out.append(f"{name} = {body}")
        out.append("")
    return "\n".join(out) + "\n", expected


@settings(max_examples=60, deadline=None)
@given(python_modules())
def test_python_modules_keep_every_definition_and_line(
    module: tuple[str, set[tuple[str, str, str]]],
) -> None:
    text, expected = module
    chunks = chunk_file(text, "python", "m.py", max_chunk_lines=20, window=12, overlap=3)
    assert {(c.chunk_type, c.name, c.parent_scope) for c in chunks} >= expected
    covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
    assert {n for n, line in enumerate(text.split("\n"), start=1) if line.strip()} <= covered
    assert all(c.end_line - c.start_line + 1 <= 20 for c in chunks)
