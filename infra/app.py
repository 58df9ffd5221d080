"""The CDK app: `cdk synth -c team=alpha` (cdk.json runs `python -m infra.app`), or directly
`python -m infra.app [--team alpha] [--outdir cdk.out]` with no CDK CLI, Docker or AWS credentials."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Node 20 (this machine's Node) is past jsii's support window; the banner is noise for synth.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

from aws_cdk import App, Environment

from infra.config import TeamConfig
from infra.nag import add_checks
from infra.stack import BatonStack

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def build_app(
    *,
    team: str | None = None,
    outdir: Path | None = None,
    context: Mapping[str, Any] | None = None,
    nag: bool = True,
) -> tuple[App, BatonStack]:
    """The app with one team's stack. `nag` registers the AwsSolutions checks (synth fails on findings)."""
    app = App(outdir=str(outdir) if outdir else None, context=dict(context or {}) or None)
    config = TeamConfig.from_node(app.node, team=team)
    env = None
    account, region = os.environ.get("CDK_DEFAULT_ACCOUNT"), os.environ.get("CDK_DEFAULT_REGION")
    if account and region:
        env = Environment(account=account, region=region)
    stack = BatonStack(app, config.stack_name, config=config, env=env)
    if nag and str(app.node.try_get_context("nag") or "true").lower() != "false":
        add_checks(app)
    return app, stack


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.app", description=__doc__)
    parser.add_argument("--team", default=None, help="team environment (default: context 'team', else 'dev')")
    parser.add_argument("--outdir", type=Path, default=None, help="cloud assembly directory (default: cdk.out)")
    args = parser.parse_args(argv)
    outdir = args.outdir
    if outdir is None and "CDK_OUTDIR" not in os.environ:
        outdir = Path("cdk.out")
    app, stack = build_app(team=args.team, outdir=outdir)
    assembly = app.synth()
    print(f"synthesized {stack.stack_name} to {assembly.directory}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
