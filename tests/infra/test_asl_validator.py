"""Issue 27 ("deployed as tested"): the npm `asl-validator` (tools/asl/, installed by scripts/bootstrap.sh
with `npm ci`) accepts every state machine definition AS DEPLOYED: taken from the synthesized template,
its DefinitionString (a string, or an Fn::Join / Fn::Sub) and DefinitionSubstitutions resolved to
placeholder ARNs of the right shape. One node process validates them all, and a deliberately broken copy
in the same run shows the validator does refuse (its verdicts are read per file)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from baton.workflows.asl import substitute
from baton.workflows.resources import STATE_MACHINES
from tests.infra.conftest import PREFIX, resources

pytestmark = pytest.mark.infra

VALIDATOR = Path(__file__).resolve().parents[2] / "tools" / "asl" / "node_modules" / "asl-validator"
ACCOUNT, REGION = "123456789012", "us-east-1"
PSEUDO = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": "amazonaws.com"}
_SUB = re.compile(r"\$\{([A-Za-z0-9:._-]+)\}")


def _placeholder(cfn: dict[str, Any], value: Any) -> str:
    """A CloudFormation value as deployed text: pseudo parameters as their usual values, a resource's Arn
    or Ref as a placeholder ARN of its type (a Lambda function's, a state machine's)."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(_placeholder(cfn, part) for part in parts)
    if "Fn::Sub" in value:
        template, extra = (value["Fn::Sub"], {}) if isinstance(value["Fn::Sub"], str) else value["Fn::Sub"]
        return _SUB.sub(lambda m: _named(cfn, m.group(1), extra), template)
    if "Ref" in value:
        return _named(cfn, value["Ref"], {})
    if "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        return _named(cfn, f"{logical_id}.{attribute}", {})
    raise AssertionError(f"no placeholder for {value!r}")


def _named(cfn: dict[str, Any], name: str, extra: dict[str, Any]) -> str:
    if name in extra:
        return _placeholder(cfn, extra[name])
    if name in PSEUDO:
        return PSEUDO[name]
    logical_id = name.removesuffix(".Arn")
    kind = cfn["Resources"][logical_id]["Type"]
    if kind == "AWS::Lambda::Function":
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{logical_id}"
    if kind == "AWS::StepFunctions::StateMachine":
        return f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{logical_id}"
    raise AssertionError(f"no placeholder ARN for {name} ({kind})")


def deployed_definitions(cfn: dict[str, Any]) -> dict[str, str]:
    """State machine name -> its definition as Step Functions would receive it."""
    found = {}
    for machine in resources(cfn, "AWS::StepFunctions::StateMachine").values():
        props = machine["Properties"]
        text = _placeholder(cfn, props["DefinitionString"])
        subs = {k: _placeholder(cfn, v) for k, v in props.get("DefinitionSubstitutions", {}).items()}
        found[props["StateMachineName"]] = substitute(text, subs)
    return found


def _broken(definition: str) -> str:
    """A copy that Step Functions would refuse: its first state's transition removed."""
    parsed = json.loads(definition)
    first = parsed["States"][parsed["StartAt"]]
    first.pop("Next", None)
    first.pop("End", None)
    return json.dumps(parsed)


def test_asl_validator_accepts_every_deployed_definition(cfn: dict[str, Any], tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None and VALIDATOR.is_dir(), "asl-validator is not installed: run `make bootstrap`"
    definitions = deployed_definitions(cfn)
    assert set(definitions) == {f"{PREFIX}-{workflow}" for workflow in STATE_MACHINES}
    paths = {}
    for name, text in {**definitions, "broken": _broken(definitions[f"{PREFIX}-review_gate"])}.items():
        assert "${" not in text, f"{name}: a substitution is left"
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(text)
    command = [node, str(VALIDATOR / "dist" / "bin" / "asl-validator.js")]
    for path in paths.values():
        command += ["--json-path", str(path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    output = result.stdout + result.stderr
    verdicts = {name: f'"{path}" is valid' in output for name, path in paths.items()}
    assert verdicts == {**dict.fromkeys(definitions, True), "broken": False}, output
    assert result.returncode == 1  # the broken copy, and only it (above)
