"""Where a Baton source checkout keeps what it deploys: `functions/`, `statemachines/`, the layer.

Only build-time and developer code asks (the CDK app, `baton dev`, `baton check-asl`): a Lambda never
does. The checkout is found by what it holds (`cdk.json` beside `statemachines/`), searched upwards from
this package, so a move inside the package changes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


class SourceTreeNotFoundError(RuntimeError):
    """The package runs outside a source checkout (an installed wheel, a Lambda layer)."""


@dataclass(frozen=True)
class SourceTree:
    root: Path

    @property
    def functions_dir(self) -> Path:
        return self.root / "functions"

    @property
    def statemachines_dir(self) -> Path:
        return self.root / "statemachines"

    @property
    def layer_dir(self) -> Path:
        """The Lambda layer asset: its `python/` folder is what a Lambda finds on its path."""
        return self.root / "layers" / "baton"

    def function_dir(self, name: str) -> Path:
        return self.functions_dir / name


def _is_checkout(folder: Path) -> bool:
    return (folder / "cdk.json").is_file() and (folder / "statemachines").is_dir()


@lru_cache(maxsize=1)
def source_tree() -> SourceTree:
    here = Path(__file__).resolve()
    for folder in here.parents:
        if _is_checkout(folder):
            return SourceTree(folder)
    raise SourceTreeNotFoundError(
        f"no Baton source checkout above {here}: `baton dev`, `check-asl` and `synth` run from a clone of the"
        " repository (the folder holding cdk.json and statemachines/)"
    )
