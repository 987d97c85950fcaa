"""How a run's captures are cut into batches for the workers (checker/executors.py): guided by what is left, in
input order whatever the sizes, and the same results whether or not the number of items is known."""

from __future__ import annotations

from typing import Any

import pytest

from checker.executors import BATCH, MAX_BATCH, _windowed, batch_size, ordered_map


def test_batches_are_large_while_there_is_much_left_and_small_at_the_end() -> None:
    assert batch_size(100_000, 2) == MAX_BATCH
    assert batch_size(256, 2) == 32
    assert batch_size(9, 2) == 2
    assert batch_size(1, 8) == batch_size(0, 2) == 1
    assert batch_size(None, 2) == BATCH


class _Done:
    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


@pytest.mark.parametrize("count, total", [(0, 0), (1, 1), (7, 7), (500, 500), (1000, None), (300, 100), (50, 900)])
def test_every_item_once_in_order_with_batches_that_shrink(count: int, total: int | None) -> None:
    sizes: list[int] = []

    def submit(batch: list[int]) -> _Done:
        sizes.append(len(batch))
        return _Done([item * 10 for item in batch])

    out = list(_windowed(submit, lambda item: -item, range(count), 6, lambda item: item % 97 == 5, 2, total))
    assert out == [-i if i % 97 == 5 else i * 10 for i in range(count)]  # a local item runs here, in its place
    assert sum(sizes) == count - len(range(5, count, 97))


def test_the_batches_of_a_known_count_shrink_to_one() -> None:
    sizes: list[int] = []

    def submit(batch: list[int]) -> _Done:
        sizes.append(len(batch))
        return _Done(batch)

    assert list(_windowed(submit, abs, range(2000), 6, lambda item: False, 2, 2000)) == list(range(2000))
    assert sizes[0] == MAX_BATCH and sizes[-1] == 1 and sizes == sorted(sizes, reverse=True)


def test_a_pool_run_with_and_without_a_total_gives_the_same_results() -> None:
    items = list(range(300))
    assert list(ordered_map(abs, items, jobs=2, total=len(items))) == list(ordered_map(abs, items, jobs=2)) == items
