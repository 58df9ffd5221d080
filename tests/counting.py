"""Counting calls of a library's method while a block runs: how the local stack's moto fixes show the work
they save (a count, so the tests read the same on a loaded machine), each against plain moto."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


class CallsCounted:
    """How many times the methods `targets` name ((owner class, attribute) pairs, plain functions or
    classmethods) were called while open; `counts` says which calls count (every call by default)."""

    def __init__(self, *targets: tuple[type, str], counts: Callable[..., bool] | None = None) -> None:
        self.count = 0
        self._targets = targets
        self._counts = counts
        self._originals: list[tuple[type, str, Any]] = []

    def _counted(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if self._counts is None or self._counts(*args, **kwargs):
                self.count += 1
            return function(*args, **kwargs)

        return counted

    def __enter__(self) -> CallsCounted:
        self.count = 0
        for owner, name in self._targets:
            original = owner.__dict__[name]
            self._originals.append((owner, name, original))
            if isinstance(original, classmethod):
                setattr(owner, name, classmethod(self._counted(original.__func__)))
            else:
                setattr(owner, name, self._counted(original))
        return self

    def __exit__(self, *exc: object) -> None:
        while self._originals:
            owner, name, original = self._originals.pop()
            setattr(owner, name, original)
