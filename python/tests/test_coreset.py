"""passlab.search.tune with the coreset: the shipped orderings tried in
turn (at most 1 s by default), a local search warm-started with them, and
a coreset file that is not there refused."""

import pytest

import passlab
import passlab.search as search

SRC = """
static int g(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * 3; return s; }
int f(int *a, int n) { return g(a, n) + g(a, n / 2); }
int h(int *a) { return g(a, 4); }
"""


def test_the_coreset_tries_its_orderings_and_warms_local_search():
    m = passlab.Module.from_c(SRC, level="O1")
    r = search.tune(m, strategy="coreset", levels=False)
    assert r["trials"] and all(t["phase"] == "list" for t in r["trials"])
    assert r["best"]["instructions"] <= r["trials"][0]["instructions"]
    w = search.tune(m, trials=20, strategy="local", warm="coreset", levels=False)
    assert len(w["trials"]) == 20
    assert all(t["phase"] == "local" for t in w["trials"])
    with pytest.raises(passlab.InvalidError):
        search.tune(m, strategy="coreset", coreset="/nonexistent/coreset.txt")
