"""Similar-on-store as an update detector: `store_memory` names the fact a new one updates
(a move, a changed preference, a correction) and stays quiet on facts that only share a
topic. The rule is memcore/_facade/updates.py; the real MiniLM model gives the cosines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memcore
from backends import Backend, both_backends
from conftest import MINILM_DIR, require_model, unit
from memcore._facade.updates import looks_like_update, same_subject, subject, updated_facts

pytestmark = both_backends


@pytest.fixture
def minilm(backend: Backend, data_dir: Path) -> Iterator[memcore.Memory]:
    with backend.open(data_dir, model_path=require_model(MINILM_DIR)) as mem:
        assert mem.embeddings is not None and mem.embeddings.wait_ready(60)
        yield mem


def _cosine(mem: memcore.Memory, old: str, new: str) -> float:
    assert mem.embeddings is not None
    a, b = mem.embeddings.embed_passages([old, new])
    return float(np.dot(a, b))


UPDATES = [
    ("User lives in Seattle", "User moved to Austin"),
    ("User prefers tea in the morning", "User switched to coffee in the mornings"),
    ("Tom works for Acme Corp", "Tom started a new job at Globex"),
    ("The prod database runs Postgres 14", "Prod was upgraded to Postgres 16"),
    ("The API rate limit is 100 requests per minute", "The API rate limit is now 500 a minute"),
    # No change word, cosine 0.77: the new number makes it an update.
    ("Our mailing list has 800 members", "The mailing list passed 1,500 members"),
    ("The warehouse stores 300 pallets", "The warehouse can take 450 pallets after the expansion"),
]
RELATED = [
    ("User lives in Seattle", "User's sister lives in Portland"),  # another subject
    ("User lives in Seattle", "User works as a nurse"),  # another attribute
    ("User speaks Spanish", "User is also learning Italian"),  # an addition
    ("The billing service timeout is 5 seconds", "The search service timeout is 2 seconds"),
]


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_an_update_is_flagged(minilm: memcore.Memory, old: str, new: str) -> None:
    assert looks_like_update(old, new, _cosine(minilm, old, new))


@pytest.mark.parametrize(("old", "new"), RELATED)
def test_a_fact_that_only_shares_the_topic_is_not(
    minilm: memcore.Memory, old: str, new: str
) -> None:
    assert not looks_like_update(old, new, _cosine(minilm, old, new))


def test_the_readme_example_asks_to_supersede(minilm: memcore.Memory) -> None:
    old = minilm.store_memory("User lives in Seattle")
    minilm.store_memory("User works as a nurse")
    minilm.store_memory("User's sister lives in Portland")
    new = minilm.store_memory("User moved to Austin")
    assert [m.id for m in new.similar] == [old.id]
    assert new.action_required == (
        f'Call supersede_memory("{old.id}", "{new.id}") to mark the old memory as outdated'
        " if the new one replaces it."
    )
    assert new.to_dict()["similar"][0]["content"] == "User lives in Seattle"


def test_a_related_fact_gets_no_hint(minilm: memcore.Memory) -> None:
    minilm.store_memory("User lives in Seattle")
    added = minilm.store_memory("User's sister lives in Portland")
    assert added.similar == [] and added.action_required is None


def test_a_superseded_fact_is_not_named_again(minilm: memcore.Memory) -> None:
    old = minilm.store_memory("User lives in Seattle")
    new = minilm.store_memory("User moved to Austin")
    minilm.supersede_memory(old.id, new.id)
    newest = minilm.store_memory("User moved to Denver")
    assert [m.id for m in newest.similar] == [new.id]


# -- the text side of the rule, without a model -------------------------------------------


def test_a_relation_word_makes_another_subject() -> None:
    assert same_subject("Maria lives in Hamburg", "Maria moved to Munich")
    assert not same_subject("Maria lives in Hamburg", "Maria's brother lives in Munich")
    assert not same_subject("User is 29 years old", "User's brother is 35")
    assert same_subject("My manager is Rachel", "The user's new manager is David")


def test_the_leading_noun_phrase_is_the_subject() -> None:
    assert same_subject("The CI pipeline runs on Jenkins", "CI moved from Jenkins to Actions")
    assert same_subject("The max upload size is 10 MB", "Uploads can be up to 25 MB now")
    assert not same_subject("The mobile team uses Swift", "The web team uses TypeScript")


def test_text_in_another_script_falls_back_to_cosine(mem: memcore.Memory) -> None:
    base = unit(5, 16)
    old = mem.store_memory("用户住在西雅图", vector=base)
    close = mem.store_memory("用户现在住在西雅图市", vector=base + unit(6, 16) * 0.1)
    assert [m.id for m in close.similar] == [old.id]
    far = mem.store_memory("用户搬到了奥斯汀", vector=unit(7, 16))
    assert far.similar == []


def test_a_change_cue_names_only_the_closest_fact_about_the_subject() -> None:
    candidates = [("User lives in Seattle", 0.57), ("User works as a nurse", 0.41)]
    assert updated_facts("User moved to Austin", candidates) == [0]
    # Without a change cue only a close restatement counts.
    assert updated_facts("User likes Austin", candidates) == []
    assert updated_facts("User likes Austin", [("User likes Austin a lot", 0.93)]) == [0]
    # An addition never replaces anything, however close.
    assert updated_facts("User also lives in Austin", [("User lives in Seattle", 0.9)]) == []


def test_a_new_number_for_the_same_quantity_is_an_update() -> None:
    new = "The mailing list passed 1,500 members"  # no change word
    assert updated_facts(new, [("Our mailing list has 800 members", 0.75)]) == [0]
    # The same number, or none in the old fact: only a close restatement would count.
    assert updated_facts(new, [("Our mailing list has 1500 members", 0.75)]) == []
    assert updated_facts(new, [("Our mailing list is run by Dana", 0.75)]) == []
    # Loosely related is not enough without a change word.
    assert updated_facts(new, [("Our mailing list has 800 members", 0.6)]) == []


def test_the_engine_stores_and_finds_the_candidates_in_one_call(mem: memcore.Memory) -> None:
    """`Memory.store_memory` crosses into the core once: the engine's store returns the
    new memory with the candidates (and their cosines) that the update rule reads."""
    engine = mem._engine
    base = unit(8, 16)
    old, _ = engine.store_memory(mem.namespace, "User lives in Seattle", vector=base)
    new, candidates = engine.store_memory(
        mem.namespace,
        "User lives in Seattle now",
        vector=base + unit(9, 16) * 0.1,
        similar_threshold=0.5,
        similar_limit=5,
    )
    assert isinstance(new, memcore.MemoryRecord)
    assert [(m.id, m.content) for m, _ in candidates] == [(old.id, "User lives in Seattle")]
    assert 0.9 < candidates[0][1] <= 1.0
    _, none = engine.store_memory(mem.namespace, "no threshold", vector=base)
    assert none == []


# -- by attribute, not by words (issue 45) -------------------------------------------------


def test_a_fronted_adverbial_is_not_the_subject() -> None:
    assert subject("After the merger, the company is called Nordfix") == ["company"]
    assert subject("Since the spring Ida reports to Walter") == ["ida"]
    new = "Since the merger Ida reports to Walter"
    assert updated_facts(new, [("Ida reports to Greta", 0.62)]) == [0]


def test_different_names_are_different_subjects() -> None:
    assert not same_subject("Project Heron ships in May", "Project Lark ships in June")
    assert not same_subject("Bruno reports to Elena", "Chloe reports to Elena")
    assert (
        updated_facts("Project Lark now ships in June", [("Project Heron ships in May", 0.7)]) == []
    )
    # The owner's name is the subject's: the same person either way.
    assert same_subject("Bruno's manager is Elena", "Bruno reports to Hugo")


def test_a_modifier_that_names_another_thing_makes_another_subject() -> None:
    assert not same_subject("The team meets on Mondays", "The design team meets on Wednesdays")
    assert not same_subject("The sprint demo is on Friday", "The sprint retro is on Thursday")
    assert not same_subject("The user's gas bill is $40", "The user's water bill is $25")
    # ... but one that only dates, ranks or says how often does not.
    assert same_subject("The user's home email is a@x.org", "The user's new email is b@x.org")
    assert same_subject("The monthly hosting bill is $90", "The hosting bill is $120 a month")


def test_the_same_attribute_in_other_words_is_an_update() -> None:
    # A role named by a synonym, without a change word and far below CLOSE_COSINE.
    assert updated_facts("Noor works as a pharmacist", [("Noor is a nurse", 0.45)]) == [0]
    # A state, and a number written in words.
    pending = [("The user's loan request is pending", 0.6)]
    assert updated_facts("The user's loan request was approved", pending) == [0]
    members = [("The reading group has 9 members", 0.75)]
    assert updated_facts("The reading group has fourteen members", members) == [0]
    # What was denied is now said.
    assert updated_facts("The user keeps two rabbits", [("The user has no pets", 0.5)]) == [0]
    # Two attributes of one subject stay apart, however the rule reads them.
    assert updated_facts("Noor works as a pharmacist", [("Noor lives in Porto", 0.45)]) == []


def test_an_addition_updates_a_fact_that_counts_or_lists_the_set() -> None:
    assert updated_facts("The user adopted another dog", [("The user has two dogs", 0.6)]) == [0]
    languages = [("The user speaks Dutch and German", 0.6)]
    assert updated_facts("The user also speaks Polish", languages) == [0]
    # One member named, not counted: the addition leaves that fact true.
    assert (
        updated_facts("The user also plays the cello", [("The user plays the violin", 0.6)]) == []
    )
