"""Keyword search beyond English, without an embedding model: a word of Chinese,
Japanese or Korean text finds it (the text indexes as character pairs and characters), and
a word typed without its diacritics finds the text that has them; memories, turns and code
comments alike (rust/memcore/src/text/analyzer.rs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import memcore

SHANGHAI = "用户住在上海，喜欢喝绿茶"
TOKYO = "ユーザーは東京に住んでいます"
SEOUL = "사용자는 서울에 살고 있습니다"
MUNICH = "Die Nutzerin wohnt in München"
MONTREAL = "L'utilisateur habite à Montréal"
ENGLISH = "The user lives in Boston and drinks black coffee"


@pytest.fixture
def keyword_only(tmp_path: Path) -> Iterator[memcore.Memory]:
    mem = memcore.Memory(tmp_path / "store", model=None)
    yield mem
    mem.close()


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("上海", SHANGHAI),
        ("绿茶", SHANGHAI),
        ("茶", SHANGHAI),
        ("東京", TOKYO),
        ("서울", SEOUL),
        ("Munchen", MUNICH),
        ("München", MUNICH),
        ("montreal", MONTREAL),
        ("Boston coffee", ENGLISH),
    ],
)
def test_a_word_finds_the_memory_that_says_it(
    keyword_only: memcore.Memory, query: str, text: str
) -> None:
    ids = {t: m.id for t, m in zip(ALL, keyword_only.store_memories(ALL), strict=True)}
    hits = keyword_only.search_text(query)
    assert [h.memory.id for h in hits] == [ids[text]]
    # The stored text is kept as written.
    assert hits[0].memory.content == text


ALL = [SHANGHAI, TOKYO, SEOUL, MUNICH, MONTREAL, ENGLISH]


def test_a_turn_is_found_by_a_word_of_its_own(keyword_only: memcore.Memory) -> None:
    # One conversation each: a found turn brings its conversation's neighbours along.
    keyword_only.record_turn("zh", SHANGHAI, "好的，记住了。", turn_id="zh")
    keyword_only.record_turn("ja", TOKYO, "わかりました。", turn_id="ja")
    keyword_only.record_turn("fr", MONTREAL, "D'accord.", turn_id="fr")
    keyword_only.record_turn("en", ENGLISH, "Noted.", turn_id="en")
    for query, turn_id in (("上海", "zh"), ("東京", "ja"), ("montreal", "fr")):
        items = keyword_only.retrieve_context(query, conversation_id="now").items
        assert [item.turn.turn_id for item in items] == [turn_id], query


def test_a_code_comment_is_found_by_a_word_of_its_own(
    keyword_only: memcore.Memory, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "sync.py").write_text(
        "def push_orders(rows):\n    # 把订单同步到上海的仓库\n    return send(rows)\n"
    )
    (root / "report.py").write_text(
        "def weekly_report(data):\n    # Envoie le rapport au bureau de Montréal\n"
        "    return render(data)\n"
    )
    (root / "misc.py").write_text("def helper(x):\n    # nothing to see here\n    return x\n")
    keyword_only.index_project(root, project_id="demo")
    for query, path in (("上海", "sync.py"), ("Montreal", "report.py")):
        hits = keyword_only.search_code(query, project_id="demo")
        assert [Path(h.file_path).name for h in hits] == [path], query
