"""`baton synth`: synthesize one team environment to a cloud assembly, offline (no Docker, no AWS
credentials, no CDK CLI). The lead exposes `synth()` as the CLI command."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


from infra.app import build_app

if TYPE_CHECKING:
    from collections.abc import Mapping

    from aws_cdk import App

    from infra.stack import BatonStack


@dataclass
class Synthesized:
    app: App
    stack: BatonStack
    outdir: Path

    @property
    def template_path(self) -> Path:
        return self.outdir / f"{self.stack.stack_name}.template.json"


def synthesize(team: str, outdir: Path, *, context: Mapping[str, Any] | None = None, nag: bool = True) -> Synthesized:
    """Build and synthesize. With `nag` (default) any unacknowledged cdk-nag finding fails the synth
    (RuntimeError naming `<outdir>/validation-report.json`)."""
    outdir = Path(outdir).resolve()
    app, stack = build_app(team=team, outdir=outdir, context=context, nag=nag)
    app.synth()
    return Synthesized(app=app, stack=stack, outdir=outdir)


def synth(team: str, outdir: Path) -> Path:
    """Synthesize team `team` into `outdir`; returns the CloudFormation template's path."""
    return synthesize(team, outdir).template_path
