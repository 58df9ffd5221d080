"""What importing each handler loads at cold start (in a fresh interpreter, so this process's imports don't
hide any). That every handler imports with only what its function ships (its code asset and layers as
synthesized, on the runtime's Python): tests/infra/test_deployed_imports.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# ---- cold start: what importing a handler loads ------------------------------------------------------

# Imports each handler in turn in one fresh interpreter and reports, after each, which of `watched` are
# loaded. A module some handler loads shows up at the first handler that loads it; the MCP and API
# handlers come last, so what they load (the resolver, the routes) cannot hide what another handler loads.
_PROBE = """
import importlib.util, json, sys
from pathlib import Path
watched = json.loads(sys.argv[2])
report = {}
last = {"mcp": 1, "api": 2}
for handler in sorted(Path(sys.argv[1]).glob("*/handler.py"), key=lambda p: (last.get(p.parent.name, 0), p)):
    spec = importlib.util.spec_from_file_location(f"lambda_{handler.parent.name}", handler)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    prefixes = tuple(w + "." for w in watched)
    report[handler.parent.name] = sorted(m for m in sys.modules if m in watched or m.startswith(prefixes))
print(json.dumps(report))
"""
# Not imported by any handler with tracing off: the X-Ray SDK, boto3, and the botocore modules a client
# is built from (Powertools itself imports the `botocore` package to tag its user agent).
NOT_AT_IMPORT = ["aws_xray_sdk", "boto3", "botocore.client", "botocore.session"]
API_ONLY = ["baton.api"]  # the routes, their request models and the resolver: only the API function serves them
NEVER_DEPLOYED = ["baton.cli", "baton.local", "baton.client"]


TRACING_ENV = ("LAMBDA_TASK_ROOT", "POWERTOOLS_TRACE_DISABLED", "AWS_SAM_LOCAL", "AWS_CHALICE_CLI_MODE")


def _without(environ: Mapping[str, str], *names: str) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k not in names}


def _loaded_per_handler(env: dict[str, str], watched: list[str]) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(ROOT / "functions"), json.dumps(watched)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={
            **_without(os.environ, *TRACING_ENV),
            "BATON_TABLE_NAME": "import-check",
            "AWS_DEFAULT_REGION": "us-east-1",
            **env,
        },
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) == {p.parent.name for p in (ROOT / "functions").glob("*/handler.py")}
    return report


HANDLERS = sorted(p.parent.name for p in (ROOT / "functions").glob("*/handler.py"))

# What a handler's import may load, checked one handler per fresh interpreter (a Lambda sandbox imports
# one handler): the modules under WATCHED that it loads must be ones MAY_LOAD names for it (a name allows
# its submodules and the packages above it). A handler that starts importing one more of them fails here
# until this table says why it needs it: the pins that keep each cold start at its floor.
WATCHED = [
    *NOT_AT_IMPORT,
    *NEVER_DEPLOYED,
    "baton.api",  # the routes and the resolver's plumbing: the API function's
    "baton.adapters",  # boto3's side: imported by baton/runtime/wiring.py on the first call
    "baton.services",
    "baton.contracts",
    "baton.models",
    "baton.events",
    "baton.notify",
    "baton.channels",
    "baton.mcp",
    "baton.workflows",
    "baton.merge",
    "fastjsonschema",  # compiled answer schemas: loaded with the first jsonSchema
    "re2",  # and the engine their patterns run in (baton/domain/linear_patterns.py)
    "urllib.request",  # and with it http.client, ssl, email: loaded at a notifier's first POST
    "http.client",
    "aws_lambda_powertools.event_handler",
    "aws_lambda_powertools.utilities.idempotency",
    "mcp_types",
]
MAY_LOAD: dict[str, tuple[str, ...]] = {
    "api": ("baton.api", "aws_lambda_powertools.event_handler"),
    # The MCP door: its tools' models and the API's caller resolution; the services, records, contracts and
    # the notification model (for an interrupt's channel names) a tool call uses are imported by that call
    # (baton/mcp/agent.py, baton/domain/interrupt_fields.py).
    "mcp": ("baton.mcp", "baton.api.auth", "mcp_types"),
    # Every other function (the gate functions, the scheduled ones, audit_archive) loads none of them: its
    # services, records and events come with its first call (`services()`, or the archive's own import).
    "notify_console": ("baton.notify.console", "baton.notify.model", "baton.notify.subscriber"),
    # The mail and its signed link; the answer desk behind the link (its forms, shared with Slack, and the
    # records) is the API's, not this function's.
    "notify_email": ("baton.notify.email", "baton.notify.model", "baton.notify.subscriber", "baton.channels.email"),
    **{
        name: (
            "baton.notify.config",
            "baton.notify.model",
            "baton.notify.slack",
            "baton.notify.subscriber",
            "baton.notify.transport",
            "baton.notify.webhook",
        )
        for name in ("notify_slack", "notify_webhook")
    },
}

_ONE_HANDLER = """
import importlib.util, json, sys
handler, watched = sys.argv[1], json.loads(sys.argv[2])
spec = importlib.util.spec_from_file_location("lambda_handler", handler)
spec.loader.exec_module(importlib.util.module_from_spec(spec))
print(json.dumps(sorted(m for m in sys.modules if m in watched or m.startswith(tuple(w + "." for w in watched)))))
"""


def _loaded_by(function: str, env: dict[str, str]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", _ONE_HANDLER, str(ROOT / "functions" / function / "handler.py"), json.dumps(WATCHED)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={
            **_without(os.environ, *TRACING_ENV),
            "BATON_TABLE_NAME": "import-check",
            "AWS_DEFAULT_REGION": "us-east-1",
            **env,
        },
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def _allowed(module: str, allowed: tuple[str, ...]) -> bool:
    return any(module == a or module.startswith(a + ".") or a.startswith(module + ".") for a in allowed)


def test_every_handler_has_its_pins_and_every_pin_names_a_handler() -> None:
    assert set(MAY_LOAD) <= set(HANDLERS)
    assert "park" in HANDLERS and "api" in HANDLERS and "notify_console" in HANDLERS


@pytest.mark.parametrize("function", HANDLERS)
def test_importing_each_handler_with_tracing_off_loads_no_xray_sdk_builds_no_boto3_client_and_keeps_its_pins(
    function: str,
) -> None:
    # A Lambda sandbox (LAMBDA_TASK_ROOT set) with tracing turned off, importing this one handler.
    loaded = _loaded_by(function, {"LAMBDA_TASK_ROOT": str(ROOT), "POWERTOOLS_TRACE_DISABLED": "true"})
    assert not [m for m in loaded if m.split(".")[0] in ("aws_xray_sdk", "boto3")], loaded
    assert "botocore.client" not in loaded and "botocore.session" not in loaded, loaded
    assert not [m for m in loaded if m.startswith(tuple(NEVER_DEPLOYED))], loaded
    # The MCP door resolves its caller with the API's one resolver (baton.api.auth), and no more of it.
    allowed_api = {"api": None, "mcp": {"baton.api", "baton.api.auth"}}.get(function, set())
    if allowed_api is not None:
        assert not [m for m in loaded if m.startswith("baton.api") and m not in allowed_api], loaded
    assert [m for m in loaded if not _allowed(m, MAY_LOAD.get(function, ()))] == []


def test_the_pins_catch_a_handler_that_loads_one_more_module(tmp_path: Path) -> None:
    # The check itself can fail: a handler importing the SNS notifier (and so urllib.request) is refused.
    handler = tmp_path / "handler.py"
    handler.write_text("import baton.notify.sns\nimport urllib.request\n")
    result = subprocess.run(
        [sys.executable, "-c", _ONE_HANDLER, str(handler), json.dumps(WATCHED)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "BATON_TABLE_NAME": "import-check", "AWS_DEFAULT_REGION": "us-east-1"},
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    refused = [m for m in loaded if not _allowed(m, MAY_LOAD["notify_console"])]
    assert "baton.notify.sns" in refused and "urllib.request" in refused, loaded


# What the API function imports at cold start: its resolver and the request plumbing, not the routes.
# Each route module (with its request and response models and the services behind it) is imported by the
# first request it serves (baton/api/route_families.py); Powertools' OpenAPI document models and the
# Swagger UI only by a request for the spec or the docs page; answer schemas are compiled on first use.
API_NOT_AT_IMPORT = [
    "baton.api.routes_",
    "baton.contracts",
    "baton.services",
    "baton.models",
    "baton.events",
    "aws_lambda_powertools.event_handler.openapi.models",
    "aws_lambda_powertools.event_handler.openapi.swagger_ui",
    "fastjsonschema",
    "re2",
]


def _modules_after(code: str) -> list[str]:
    """Every module loaded once `code` ran in a fresh interpreter, as a Lambda sandbox with tracing off."""
    env = {**_without(os.environ, *TRACING_ENV), "BATON_TABLE_NAME": "import-check", "AWS_DEFAULT_REGION": "us-east-1"}
    env |= {"LAMBDA_TASK_ROOT": str(ROOT), "POWERTOOLS_TRACE_DISABLED": "true"}
    code += "import json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


_IMPORT_API = (
    "import importlib.util\n"
    f"spec = importlib.util.spec_from_file_location('lambda_api', {str(ROOT / 'functions' / 'api' / 'handler.py')!r})\n"
    "api = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(api)\n"
)


def test_the_api_handler_imports_no_route_module_contract_service_or_openapi_document_model() -> None:
    loaded = _modules_after(_IMPORT_API)
    assert "baton.api.app" in loaded and "baton.api.route_families" in loaded  # the probe imported the handler
    assert [m for m in loaded if m.startswith(tuple(API_NOT_AT_IMPORT))] == []


# What a resume's first request includes before it runs (baton/api/route_families.py): its route module with
# its request models and the response contracts; not the records, events, services or the notification
# model, which the call itself imports (through baton/runtime/wiring.py) when it needs them.
RESUME_ROUTES_NOT_AT_INCLUDE = [
    "baton.models",
    "baton.events",
    "baton.services",
    "baton.notify",
    "baton.channels",
    "baton.domain.interrupt_spec",
    "baton.domain.answer_schema",
    "fastjsonschema",
    "re2",
]


def test_a_resume_requests_routes_load_no_record_event_service_or_notification_model() -> None:
    include = (
        "from baton.api.route_families import family_of\napi.APP.include_family(family_of('/api/runs/r/resume'))\n"
    )
    loaded = _modules_after(_IMPORT_API + include)
    assert "baton.api.routes_runs" in loaded and "baton.contracts.runs" in loaded  # the family was included
    assert [m for m in loaded if m.startswith(tuple(RESUME_ROUTES_NOT_AT_INCLUDE))] == []


def test_outside_lambda_tracing_is_off_and_no_handler_loads_the_xray_sdk() -> None:
    report = _loaded_per_handler({}, ["aws_xray_sdk"])
    assert report and not any(report.values()), report


def test_with_tracing_on_the_tracer_patches_botocore_and_nothing_else() -> None:
    code = (
        "import json, sys\n"
        "from baton.runtime.observability import tracer\n"
        "from aws_xray_sdk.core import patcher\n"
        "print(json.dumps({'type': type(tracer).__name__, 'patched': sorted(patcher._PATCHED_MODULES),"
        " 'loaded': sorted(m for m in ('requests', 'httpx', 'pymysql', 'sqlite3') if m in sys.modules)}))\n"
    )
    env = {**_without(os.environ, *TRACING_ENV), "LAMBDA_TASK_ROOT": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "type": "Tracer",
        "patched": ["botocore"],
        "loaded": [],
    }


@pytest.mark.parametrize(
    ("environ", "enabled"),
    [
        ({}, False),  # outside Lambda
        ({"LAMBDA_TASK_ROOT": "/var/task"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "false"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"}, False),
    ],
)
def test_tracing_is_on_only_in_a_lambda_sandbox_unless_disabled(environ: dict[str, str], enabled: bool) -> None:
    from baton.runtime.observability import Untraced, build_tracer, tracing_enabled

    assert tracing_enabled(environ) is enabled
    if not enabled:
        tracer = build_tracer(environ)
        assert isinstance(tracer, Untraced)

        def handler(event: dict[str, str], context: object) -> dict[str, str]:
            return event

        assert tracer.capture_lambda_handler(handler) is handler
