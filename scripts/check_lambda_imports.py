"""Every Lambda handler imports with only what the deployment ships: the baton layer as its asset ships
(without the CLI, the local stack and the SDK: `infra/assets.py`), the AWS-managed Powertools layer
(Powertools, pydantic, fastjsonschema, aws-xray-sdk), the runtime's boto3 and, for the mcp function,
its mcp-types layer (infra/capabilities/mcp.py). Dev-machine packages (the
CLI's httpx/typer/rich, moto, CDK, test tools) and the checkout's own folders must not be on that path.

The layer is copied to a temporary folder with the asset's exclude list and put first on the path; the
checkout's `baton` is taken off it, so a handler that imports `baton.cli` (or a fake) fails here.

Usage: uv run python scripts/check_lambda_imports.py [--functions DIR] [--layer DIR]
       (exit 1 naming the handler and the import)
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from infra.assets import stage

ROOT = Path(__file__).resolve().parents[1]
NOT_IN_LAMBDA = {
    "httpx",
    "typer",
    "rich",
    "moto",
    "aws_cdk",
    "cdk_nag",
    "hypothesis",
    "pytest",
    "yaml",
    "jsonschema",
    "mcp",  # the MCP SDK's server and client: the mcp function gets only its types (mcp_types, its own layer)
    # the checkout's folders beside the layer: not deployed with any function
    "infra",
    "tests",
    "functions",
    "scripts",
}


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in NOT_IN_LAMBDA:
            raise ImportError(f"imports {name}, which the Lambda layers do not ship")


def _only_the_shipped_layer(layer_python: Path) -> None:
    """The staged layer's `python/` first on the path, and no other `baton` anywhere on it."""
    sys.path[:] = [entry for entry in sys.path if not (Path(entry or ".") / "baton").is_dir()]
    sys.path.insert(0, str(layer_python))
    for name in [m for m in sys.modules if m == "baton" or m.startswith("baton.")]:
        del sys.modules[name]


def _import_handlers(functions_dir: Path) -> int:
    failures = 0
    for handler in sorted(functions_dir.glob("*/handler.py")):
        spec = importlib.util.spec_from_file_location(f"lambda_{handler.parent.name}", handler)
        assert spec is not None and spec.loader is not None
        try:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        except Exception as err:
            failures += 1
            print(f"FAIL {handler.parent.name}: {err}")
        else:
            print(f"ok   {handler.parent.name}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=Path, default=ROOT / "functions", help="folder of <name>/handler.py")
    parser.add_argument("--layer", type=Path, default=ROOT / "layers" / "baton", help="the layer asset's root")
    args = parser.parse_args(argv)
    os.environ.setdefault("BATON_TABLE_NAME", "import-check")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    with tempfile.TemporaryDirectory(prefix="baton-layer-") as staged:
        _only_the_shipped_layer(stage(args.layer, Path(staged)) / "python")
        sys.meta_path.insert(0, _Blocker())
        failures = _import_handlers(args.functions)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
