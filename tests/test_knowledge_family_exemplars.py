"""The sort and row-gather exemplars reach the slices of the operators they were written for (sort,
top-k, argsort, unique; index_select, embedding, row permutations) in init and repair, and no other."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from knowledge import assemble


def _task(golden, shapes, dtypes):
    case = SimpleNamespace(shapes=shapes, dtypes=dtypes, attrs={})
    return SimpleNamespace(name=golden.__name__, category=None, golden=golden, cases=[case], attrs=[])


def sort_desc(x):
    return torch.sort(x, dim=-1, descending=True)


def topk5(x):
    return torch.topk(x, 5, dim=-1)


def argsort_rows(x):
    return torch.argsort(x, dim=-1)


def unique_sorted(x):
    return torch.unique(x, sorted=True, return_inverse=True)


def index_rows(x, index):
    return torch.index_select(x, 0, index)


def embedding_lookup(index, weight):
    return torch.nn.functional.embedding(index, weight)


def permute_rows(x, index):
    return x[index]


SORTS = [(sort_desc, [(8, 64)], ["float32"]), (topk5, [(8, 64)], ["float32"]),
         (argsort_rows, [(8, 64)], ["float16"]), (unique_sorted, [(300,)], ["int32"])]
GATHERS = [(index_rows, [(16, 32), (8,)], ["float32", "int64"]),
           (embedding_lookup, [(8,), (16, 32)], ["int64", "float32"]),
           (permute_rows, [(16, 32), (8,)], ["float16", "int64"])]


@pytest.mark.parametrize("golden,shapes,dtypes", SORTS, ids=[g[0].__name__ for g in SORTS])
@pytest.mark.parametrize("phase", ["init", "repair"])
def test_sort_like_operators_get_the_sort_exemplar_first(golden, shapes, dtypes, phase):
    sl = assemble(_task(golden, shapes, dtypes), phase, "910B2")
    l5 = [c for c in sl.cards if c.level == "L5"]
    assert [c.id for c in l5] == ["L5.sort-sort_rows", "L5.reduction-to-scalar-mse_loss"]
    assert all(c.mode == "full" for c in l5) and "MrgSort(" in l5[0].text
    assert "L5.sort-sort_rows is here for its in-UB sort" in sl.render()


@pytest.mark.parametrize("golden,shapes,dtypes", GATHERS, ids=[g[0].__name__ for g in GATHERS])
@pytest.mark.parametrize("phase", ["init", "repair"])
def test_row_gathers_get_the_pass_through_exemplar(golden, shapes, dtypes, phase):
    sl = assemble(_task(golden, shapes, dtypes), phase, "910B2")
    l5 = [c for c in sl.cards if c.level == "L5"]
    assert [c.id for c in l5] == ["L5.gather-gather_rows"]
    assert "TQueBind<TPosition::VECIN, TPosition::VECOUT" in l5[0].text


def test_the_init_slice_of_a_sort_names_the_sort_apis():
    ids = assemble(_task(sort_desc, [(8, 64)], ["float32"]), "init", "910B2").ids
    assert {"L4.sort-topk", "L4.Fill-Index", "L4.Atomic-SyncAll"} <= set(ids)


@pytest.mark.parametrize("pattern", ["elementwise", "reduction", "softmax", "normalization"])
def test_pattern_slices_keep_their_own_exemplar(pattern):
    ids = assemble(pattern, "init", "910B2").ids
    assert "L5.sort-sort_rows" not in ids and "L5.gather-gather_rows" not in ids
