"""sse-check's predictions held to the real clients on thousands of mutants of real streams.

The mutants (tests/mutant_corpus.py: one defect each, deterministic from a seed) are labelled by running the
real clients (``make mutant-labels``: tests/mutant_labels/<dialect>.<client>.jsonl). Here:

* the corpus is the one the labels were made from (same ids, same digest);
* for every labelled client and every mutant, the matrix's verdict equals the verdict the label shows
  (breaks: the client raised; ok: it returned what the stream carried; degraded: it returned something else),
  except for the classes of disagreement listed in ``KNOWN`` (tests/mutant_known.py), each with its reason:
  a listed class that no longer occurs fails too, so the list only shrinks;
* a fixed sample of mutants is run through the real clients again, and their outcomes must equal the stored
  labels (a client release, or a change of the oracles, that changes a label shows up here).
"""

from __future__ import annotations

import os
import random
from collections import Counter

import mutant_corpus as corpus
import mutant_labels as labels
import pytest
from mutant_known import KNOWN, disagreement_class

import node_oracle

LABELLED = [(d, c) for d in corpus.DIALECTS for c in labels.clients(d) if labels.label_path(d, c).is_file()]
SAMPLE_PER_CLIENT = 30


@pytest.fixture(scope="module")
def compared() -> dict[tuple[str, str], list[tuple[corpus.Mutant, labels.Compared]]]:
    return labels.compare_all()


def test_every_dialect_has_labels_from_its_clients() -> None:
    assert {d for d, _ in LABELLED} == set(corpus.DIALECTS)
    assert all(sum(1 for d2, _ in LABELLED if d2 == d) >= 2 for d in corpus.DIALECTS)


@pytest.mark.parametrize("dialect", corpus.DIALECTS)
def test_the_corpus_is_the_one_the_labels_were_made_from(dialect: str) -> None:
    manifest = labels.read_manifest()
    items = corpus.mutants(dialect)
    assert len(items) >= 500, dialect
    assert manifest["seed"] == corpus.SEED
    assert manifest["dialects"][dialect] == {"mutants": len(items), "digest": corpus.digest(items),
                                             "sources": len(corpus.sources(dialect))}, (
        "the mutant generator or its sources changed: run `make mutant-labels`")
    ids = [m.id for m in items]
    assert len(set(ids)) == len(ids)
    for d, client in LABELLED:
        if d == dialect:
            assert sorted(labels.read_labels(dialect, client)) == sorted(ids), (dialect, client)


def test_every_mutant_says_what_it_changed() -> None:
    for dialect in corpus.DIALECTS:
        kinds = Counter(m.kind for m in corpus.mutants(dialect))
        assert set(kinds) >= {"field", "ident", "event", "framing"}, (dialect, kinds)
        for m in corpus.mutants(dialect)[:50]:
            assert m.id == f"{m.source}|{m.mutation_class}|{m.change}" and m.change


@pytest.mark.parametrize(("dialect", "client"), LABELLED, ids=[f"{d}-{c}" for d, c in LABELLED])
def test_the_prediction_equals_the_real_client_on_every_mutant(
        dialect: str, client: str, compared: dict[tuple[str, str], list[tuple[corpus.Mutant, labels.Compared]]]
) -> None:
    rows = compared[(dialect, client)]
    unexplained: list[str] = []
    seen: Counter[tuple[str, ...]] = Counter()
    for m, c in rows:
        if c.agrees:
            continue
        klass = disagreement_class(dialect, client, c)
        seen[klass] += 1
        if klass not in KNOWN:
            unexplained.append(f"{m.id}: predicted {c.predicted} ({c.decided_by}), the client {c.observed}: "
                               f"{c.detail[:200]}")
    stale = [k for k in KNOWN if k[:2] == (dialect, client) and not seen[k]]
    assert not unexplained, f"{len(unexplained)} disagreement(s) of no known class, e.g.:\n" + "\n".join(
        unexplained[:15])
    assert not stale, f"known disagreements that no longer occur (remove them from tests/mutant_known.py): {stale}"


def _sample(dialect: str) -> list[corpus.Mutant]:
    items = corpus.mutants(dialect)
    rng = random.Random(corpus.SEED)
    return [items[i] for i in sorted(rng.sample(range(len(items)), SAMPLE_PER_CLIENT))]


@pytest.mark.parametrize(("dialect", "client"), LABELLED, ids=[f"{d}-{c}" for d, c in LABELLED])
def test_the_real_client_still_does_what_its_labels_say(dialect: str, client: str) -> None:
    why = labels.available(client)
    if why is not None:
        if os.environ.get(node_oracle.REQUIRE_ENV) or os.environ.get("CI"):
            pytest.fail(f"{client} is required here: {why}")
        pytest.skip(f"{client} not installed: {why}")
    stored = labels.read_labels(dialect, client)
    sample = _sample(dialect)
    version, outcomes = labels.run_client(client, dialect, sample)
    assert labels.read_manifest()["clients"][f"{dialect}.{client}"]["version"] == version
    changed = [m.id for m, o in zip(sample, outcomes, strict=True) if labels.normalised(o) != stored[m.id]]
    assert not changed, f"{client} no longer does what its labels say on: {changed}"
