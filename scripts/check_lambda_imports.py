"""Every Lambda handler imports with only what the deployment ships: the baton layer, the AWS-managed
Powertools layer (Powertools, pydantic, fastjsonschema, aws-xray-sdk) and the runtime's boto3.
Dev-machine packages (the CLI's httpx/typer/rich, moto, CDK, test tools) must not be on that path.

Usage: uv run python scripts/check_lambda_imports.py   (exit 1 naming the handler and the import)
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOT_IN_LAMBDA = {"httpx", "typer", "rich", "moto", "aws_cdk", "cdk_nag", "hypothesis", "pytest", "yaml", "jsonschema"}


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in NOT_IN_LAMBDA:
            raise ImportError(f"imports {name}, which the Lambda layers do not ship")


def main() -> int:
    os.environ.setdefault("BATON_TABLE_NAME", "import-check")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    sys.meta_path.insert(0, _Blocker())
    failures = 0
    for handler in sorted((ROOT / "functions").glob("*/handler.py")):
        spec = importlib.util.spec_from_file_location(f"lambda_{handler.parent.name}", handler)
        assert spec is not None and spec.loader is not None
        try:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        except Exception as err:
            failures += 1
            print(f"FAIL {handler.parent.name}: {err}")
        else:
            print(f"ok   {handler.parent.name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
