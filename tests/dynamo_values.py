"""Every shape of DynamoDB attribute value (Hypothesis strategies)."""

from __future__ import annotations

from hypothesis import strategies as st

LEAVES = st.one_of(
    st.builds(lambda s: {"S": s}, st.text(max_size=5)),
    st.builds(lambda n: {"N": str(n)}, st.integers()),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
    st.just({"NULL": True}),
    st.builds(lambda b: {"B": b}, st.binary(max_size=4)),
    st.builds(lambda ss: {"SS": ss}, st.lists(st.text(max_size=3), max_size=3)),
    st.builds(lambda ns: {"NS": [str(n) for n in ns]}, st.lists(st.integers(), max_size=3)),
)
ATTRIBUTE_VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.builds(lambda items: {"L": items}, st.lists(inner, max_size=3)),
        st.builds(lambda m: {"M": m}, st.dictionaries(st.text(min_size=1, max_size=3), inner, max_size=3)),
    ),
    max_leaves=12,
)
