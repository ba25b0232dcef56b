"""Every lemma of ``make verify``, in the order of the table it prints."""

from __future__ import annotations

from functools import cache

from .kernel import Lemma


@cache
def lemmas() -> tuple[Lemma, ...]:
    from . import engines, laws, pad_ranks, padding, prover, ranks, safety, sums

    out = (*sums.lemmas(), *ranks.lemmas(), *safety.lemmas(), *padding.lemmas(), *pad_ranks.lemmas(), *engines.lemmas(),
           *laws.lemmas(),
           *prover.lemmas())
    names = [lem.name for lem in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"lemma names used twice: {sorted(dup)}")
    return out


@cache
def by_name() -> dict[str, Lemma]:
    return {lem.name: lem for lem in lemmas()}
