"""mcp: Baton's MCP server (`functions/mcp`, `baton/mcp`) behind the machines' API as `POST /mcp`, IAM auth.

The route is on the IAM-authorized REST API (`<prefix>-api`), so an agent signs with its `run-<id>`
session of the agent role (baton/api/auth.py reads the run from it) and the CLI's `baton mcp` signs with
the caller's credentials; people (Cognito) have no MCP route: operator actions are not tools.

What the function needs at run time beyond the two shared layers is the SDK's types package
(`mcp-types`, pure Python; it needs only pydantic, which the Powertools layer carries). The SDK's server
(`mcp`) is not shipped: it imports native wheels (`cryptography` through `pyjwt[crypto]`) that would
have to be built for arm64, which needs Docker or a download at synth. `mcp_types_layer` instead
copies the installed `mcp_types` package (the version pinned in uv.lock, checked here) into a layer
asset at synth, offline.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import importlib.util
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.assets import BYTECODE, compile_for_the_runtime, is_excluded
from infra.capabilities.functions import ARCHITECTURE, RUNTIME
from infra.nag import acknowledge

if TYPE_CHECKING:
    from infra.capabilities.api import Api
    from infra.config import TeamConfig

MCP_TYPES = "mcp-types"  # the distribution; the import package is mcp_types
ROOT = Path(__file__).resolve().parents[2]


def locked_version(package: str, lock: Path = ROOT / "uv.lock") -> str:
    """The version uv.lock pins for `package` (its `[[package]]` entry)."""
    found = re.search(rf'\[\[package\]\]\nname = "{re.escape(package)}"\nversion = "([^"]+)"', lock.read_text())
    if found is None:
        raise RuntimeError(f"{package} is not in {lock}: run `uv lock`")
    return found[1]


def stage_locked_package(distribution: str, module: str, destination: Path) -> Path:
    """`destination/python/<module>` (and its license) from the installed package, which must be the
    version uv.lock pins: a pure-Python layer staged offline. Returns `destination`."""
    installed, locked = importlib.metadata.version(distribution), locked_version(distribution)
    if installed != locked:
        raise RuntimeError(f"{distribution} {installed} is installed but uv.lock pins {locked}: run `uv sync`")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"{module} is not importable: run `uv sync`")
    source = Path(spec.origin).parent
    target = destination / "python" / module
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source).as_posix()
        if path.is_file() and not is_excluded(relative, list(BYTECODE)):
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / relative)
    for file in importlib.metadata.distribution(distribution).files or ():
        if file.name in ("LICENSE", "METADATA"):
            shutil.copy2(Path(str(file.locate())), destination / "python" / f"{module}.{file.name}")
    compile_for_the_runtime(destination)  # bytecode for the runtime, as the baton layer (infra/assets.py)
    return destination


def stage_mcp_types(destination: Path) -> Path:
    return stage_locked_package(MCP_TYPES, "mcp_types", destination)


class McpEndpoint(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, config: TeamConfig, api: Api, function: lambda_.Function
    ) -> None:
        super().__init__(scope, construct_id)
        folder = Path(tempfile.mkdtemp(prefix="baton-mcp-types-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # the synth copies it into cdk.out
        staged = stage_mcp_types(folder)
        self.layer = lambda_.LayerVersion(
            self,
            "McpTypesLayer",
            layer_version_name=f"{config.prefix}-mcp-types",
            description=f"mcp-types {locked_version(MCP_TYPES)} (the MCP SDK's message models; pure Python)",
            code=lambda_.Code.from_asset(str(staged)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            removal_policy=RemovalPolicy.RETAIN,
        )
        function.add_layers(self.layer)
        # The MCP function resolves callers exactly as the API does: it must know the agent role too.
        function.add_environment("BATON_AGENT_ROLE_NAME", api.agent_role.role_name)
        resource = api.iam_api.root.add_resource("mcp")
        # ANY, not POST: the function itself answers other methods 405, as the stateless transport says.
        self.method = resource.add_method(
            "ANY",
            apigw.LambdaIntegration(function, proxy=True, allow_test_invoke=False),
            authorization_type=apigw.AuthorizationType.IAM,
        )
        acknowledge(
            self.method,
            "AwsSolutions-COG4",
            "The MCP route is for agents and the CLI, which sign with IAM (SigV4); people have no MCP route",
        )
