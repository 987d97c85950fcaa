"""Bounded fuzzing in the suite: random bytes and mutated corpus captures never crash the engine."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_harness import check_one, corpus, mutate, run_random

SEEDS = corpus()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048), st.lists(st.integers(0, 4096), max_size=6))
def test_random_bytes(data: bytes, cuts: list[int]) -> None:
    check_one(data, cuts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.lists(st.integers(0, 10**6), max_size=6))
def test_mutated_corpus(seed: int, cuts: list[int]) -> None:
    rng = random.Random(seed)
    check_one(mutate(rng, rng.choice(SEEDS)), cuts)


def test_bounded_random_run() -> None:
    # The harness's own loop, briefly, as CI runs it (the long run is documented in docs/robustness.md).
    assert run_random(5, seed=1) > 0
