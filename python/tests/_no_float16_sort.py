"""numpy's float16 sort is not ordered on every x86-64 host: numpy 2.4 on AVX512_ICL (Zen 4, Ice Lake) leaves
inversions in arrays of about 16,000 elements and more, so ``np.unique`` of such an array counts too many values.
Under the tests, numpy's sorting functions refuse float16 arrays on every host (this one included), so neither a
test nor the code it calls can depend on that sort: sort in float32 (exact) or by bit pattern."""

import functools

import numpy as np

SORTS = ("sort", "argsort", "unique", "partition", "argpartition", "median", "percentile", "quantile", "lexsort")


def _refusing(name, sort):
    @functools.wraps(sort)
    def guarded(a, *args, **kwargs):
        arrays = a if name == "lexsort" else (a,)
        if any(getattr(x, "dtype", None) == np.float16 for x in arrays):
            raise TypeError(f"np.{name} of a float16 array: numpy's float16 sort is not ordered on every CPU "
                            f"(AVX512_ICL); widen to float32 first (exact), or sort the bit patterns")
        return sort(a, *args, **kwargs)

    guarded.axe4j_guarded = True
    return guarded


def install():
    for name in SORTS:
        sort = getattr(np, name)
        if not getattr(sort, "axe4j_guarded", False):
            setattr(np, name, _refusing(name, sort))
