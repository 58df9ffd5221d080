"""`baton dev`: moto's threaded server in-process as the AWS emulator, Baton's resources created in
it, Lambda invokes dispatched to our handlers, and the HTTP API on 127.0.0.1. The table and the bearer
token are kept across restarts in the state dir (baton.local.persist) unless `fresh`."""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast
from unittest.mock import patch

from baton.errors import BatonError
from baton.local import moto_fixes, persist
from baton.local.dispatch import LambdaDispatcher
from baton.local.http_adapter import function_for_path, make_server
from baton.local.in_process import calls_in_process, shared_botocore_loader
from baton.local.inbox import InboxSite, inbox_dist, table_sessions
from baton.local.moto_scale import dynamodb_at_scale
from baton.local.origin_guard import emulator_refuses_other_origins
from baton.local.provision import Provisioned, create_state_machines, provision
from baton.private_files import private_dir, tighten, write_private
from baton.workflows.resources import FUNCTIONS, schedule_seconds

if TYPE_CHECKING:
    from collections.abc import Iterator

REGION = "us-east-1"
STATE_FILE = "local.json"
WORKFLOWS_READY_SECONDS = 120.0  # the longest a Step Functions call waits for the state machines to exist
DataMode = Literal["keep", "fresh", "off"]
OUTBOX_DIR = "outbox"
MOTO_CONFIG = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


class PortInUseError(BatonError):
    code = "port_in_use"


class WorkflowsPending:
    """The state machines are created after the API is up: until they exist, every Step Functions call to the
    emulator (in-process or over its port) waits for them, at most `WORKFLOWS_READY_SECONDS`; others answer at once."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.seconds = 0.0
        self._creator: int | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        from moto.stepfunctions.responses import StepFunctionResponse

        original = StepFunctionResponse.call_action

        def call_action(response: Any) -> Any:
            if threading.get_ident() != self._creator:
                self.wait()
            return original(response)

        with patch.object(StepFunctionResponse, "call_action", call_action):
            yield

    def create(self, stepfunctions: Any, provisioned: Provisioned, warm_up: Any, prepare: Any) -> None:
        """Warm the API handler (the first request waits for it anyway), `prepare` the Step Functions
        fixes (no call needs them before the machines exist), then create the machines."""
        self._creator = threading.get_ident()
        started = time.perf_counter()
        try:
            warm_up()
            prepare()
            create_state_machines(stepfunctions, provisioned)
        except BaseException as err:  # said by every waiting call, and by `wait_for_workflows`
            self.error = err
            logging.getLogger("baton").exception("creating the state machines failed")
        finally:
            self.seconds = time.perf_counter() - started
            self.ready.set()

    def wait(self, timeout: float = WORKFLOWS_READY_SECONDS) -> None:
        if not self.ready.wait(timeout):
            raise TimeoutError(f"the state machines were not created within {timeout:.0f} s")
        if self.error is not None:
            raise RuntimeError(f"the state machines could not be created: {self.error}") from self.error


@dataclass
class LocalInfo:
    api_url: str
    token: str
    moto_url: str
    provisioned: Provisioned
    startup_seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "api_url": self.api_url,
            "token": self.token,
            "moto_url": self.moto_url,
            "region": REGION,
            "table_name": self.provisioned.table_name,
            "topic_arn": self.provisioned.topic_arn,
            "workflows": self.provisioned.state_machine_arns,
            "pid": os.getpid(),
        }


def _check_port_free(host: str, port: int, what: str, flag: str) -> None:
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As the servers bind (socketserver's allow_reuse_address): a connection of a stack that just
        # stopped or crashed, in TIME_WAIT for a minute, does not hold the port; a live listener does.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as err:
            if err.errno in (errno.EADDRINUSE, errno.EACCES):
                raise PortInUseError(
                    f"port {port} on {host} is already in use, so the {what} cannot start there. "
                    f"Stop what is using it (is another `baton dev` running? try `lsof -i :{port}`) "
                    f"or pick another port with {flag} <port> (0 = any free port)."
                ) from err
            raise


@dataclass(kw_only=True, eq=False)
class LocalStack:
    api_port: int = 8787
    moto_port: int = 0
    state_dir: Path = Path(".baton")
    host: str = "127.0.0.1"
    log_level: str = "WARNING"
    extra_env: dict[str, str] = field(default_factory=dict)
    # notify channels whose subscriber Lambdas get SNS; email always (its mail goes to the outbox)
    subscribe_channels: tuple[str, ...] = ("console",)
    # "keep": load what the state dir saved, and save; "fresh": drop it (empty table, new token), then
    # save; "off": neither (benchmarks, tests that want nothing on disk but local.json)
    data: DataMode = "keep"
    # Seconds between scheduled runs, per function (default: its deployed rate).
    schedule_overrides: dict[str, float] = field(default_factory=dict, init=False)
    restored_items: int = field(default=0, init=False)
    closed_runs: list[str] = field(default_factory=list, init=False)
    dispatcher: LambdaDispatcher = field(default_factory=LambdaDispatcher, init=False)
    workflows: WorkflowsPending = field(default_factory=WorkflowsPending, init=False)
    info: LocalInfo | None = field(default=None, init=False)
    inbox: InboxSite | None = field(default=None, init=False)
    _persister: persist.Persister | None = field(default=None, init=False)
    _moto: Any = field(default=None, init=False)
    _http: Any = field(default=None, init=False)
    _exit_stack: contextlib.ExitStack[bool | None] = field(default_factory=contextlib.ExitStack, init=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)
    # the workflows thread enters the exit stack, stop closes it
    _installing: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.subscribe_channels = tuple(dict.fromkeys((*self.subscribe_channels, "email")))

    def _install_emulation(self) -> None:
        """What makes moto behave as AWS does for Baton (each undone on stop; Step Functions' below)."""
        self._exit_stack.enter_context(shared_botocore_loader())  # each service model parsed once
        self._exit_stack.enter_context(self.dispatcher.installed())
        if self.log_level != "INFO":  # -v shows the interpreter's failure reports
            self._exit_stack.enter_context(moto_fixes.quiet_interpreter())
        self._exit_stack.enter_context(moto_fixes.atomic_dynamodb_writes())  # writes decide races, as on AWS
        self._exit_stack.enter_context(moto_fixes.models_untracked())  # a dropped item is freed
        self._exit_stack.enter_context(moto_fixes.sns_messages_unkept())  # a delivered message is freed
        self._exit_stack.enter_context(dynamodb_at_scale())  # costs of the items touched, not of the table
        self._exit_stack.enter_context(emulator_refuses_other_origins())  # no web page reaches the table

    def _install_sfn_fixes(self) -> None:
        """Off the start-up path (they import moto's ASL interpreter: seconds on a loaded machine), before any
        execution; entered outside the lock `stop` takes (Ctrl-C never waits for the import), undone if stopping."""
        with contextlib.ExitStack() as fixes:
            fixes.enter_context(moto_fixes.sfn_integration_casing())
            fixes.enter_context(moto_fixes.sfn_stop_execution())  # it ends a run at once, as on AWS
            fixes.enter_context(moto_fixes.sfn_threads_unkept())  # an ended thread is not kept
            fixes.enter_context(moto_fixes.sfn_program_inline())  # a parked run: one thread
            # The EventBridge rule's stand-in: an ended execution's status change goes to run_lifecycle.
            fixes.enter_context(
                moto_fixes.execution_end_events(functools.partial(self._invoke_logged, "run_lifecycle"))
            )
            with self._installing:
                if not self._stopping.is_set():
                    self._exit_stack.push(fixes.pop_all())

    def start(self) -> LocalInfo:
        started = time.perf_counter()
        _check_port_free(self.host, self.api_port, "Baton API", "--port")
        _check_port_free(self.host, self.moto_port, "AWS emulator", "--moto-port")
        for folder in (private_dir(self.state_dir), self.state_dir / OUTBOX_DIR):
            tighten(folder)  # as an older Baton left it: its mails' signed links answer for whoever reads them
        from moto.moto_server.threaded_moto_server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's per-request access log

        self._install_emulation()
        self._moto = ThreadedMotoServer(ip_address=self.host, port=self.moto_port, verbose=False)
        self._moto.start()
        moto_port = self._moto.get_host_and_port()[1]
        moto_url = f"http://{self.host}:{moto_port}"
        self._exit_stack.enter_context(calls_in_process(moto_url, REGION))  # this process's calls skip the socket
        data_file = self.state_dir / persist.DATA_FILE
        if self.data == "fresh":
            data_file.unlink(missing_ok=True)
        saved = persist.load(data_file) if self.data == "keep" else None
        token = saved.token if saved else secrets.token_urlsafe(24)

        # One environment for the process: moto's Step Functions engine calls Lambda at MOTO_PORT,
        # handlers' boto3 calls reach the emulator through AWS_ENDPOINT_URL.
        os.environ.update(
            {
                "MOTO_PORT": str(moto_port),
                "AWS_ENDPOINT_URL": moto_url,
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_DEFAULT_REGION": REGION,
                "AWS_REGION": REGION,
                "POWERTOOLS_TRACE_DISABLED": "true",
                "POWERTOOLS_METRICS_DISABLED": "true",
                "POWERTOOLS_LOG_LEVEL": self.log_level,
                "BATON_LOCAL_API_TOKEN": token,
                # The channels this stack subscribes: a question asking for another one is a 422.
                "BATON_NOTIFY_CHANNELS": ",".join(self.subscribe_channels),
            }
        )
        # Review gate: the offline companion and the merge as a local subprocess, unless overridden.
        os.environ.setdefault("BATON_COMPANION", "offline")
        os.environ.setdefault("BATON_MERGE_RUNNER", "local")
        # The Slack app's worker runs after the ack: locally in a background thread (baton/adapters/slack.py).
        os.environ.setdefault("BATON_SLACK_WORKER_INVOKE", "thread")
        os.environ["BATON_VAPID_KEY_FILE"] = str(_vapid_key(self.state_dir))  # this stack's, not a previous one's
        import boto3
        import requests

        requests.post(f"{moto_url}/moto-api/config", timeout=10, json=MOTO_CONFIG).raise_for_status()
        session = boto3.session.Session()
        clients = {name: session.client(name) for name in ("iam", "dynamodb", "sns", "lambda", "stepfunctions")}

        self.inbox = InboxSite(token, inbox_dist(), sessions=table_sessions)  # read once the table is up
        self._http = make_server(self.host, self.api_port, self._invoke_api, inbox=self.inbox)
        api_url = f"http://{self.host}:{self._http.server_address[1]}"
        self.inbox.base_url = api_url
        provisioned = provision(
            clients,
            env={**self.extra_env, "BATON_API_URL": api_url},
            subscribe_channels=self.subscribe_channels,
            create_workflows=False,  # created below, once the API is up
        )
        self._exit_stack.enter_context(self.workflows.installed())
        # The email channel: mail printed and kept in the outbox (to BATON_LOCAL_EMAIL_TO's comma list), links
        # signed with a key derived from the operator token (baton/channels/email/config.py).
        email = {
            "BATON_EMAIL_RECIPIENTS": os.environ.get("BATON_LOCAL_EMAIL_TO") or "you@localhost",
            "BATON_EMAIL_OUTBOX": str((self.state_dir / OUTBOX_DIR).resolve()),
            "BATON_INBOX_URL": f"{api_url}/inbox/",
        }
        os.environ.update({**provisioned.environment(), "BATON_API_URL": api_url, **email, **self.extra_env})
        if rp_id := os.environ.get("BATON_WEBAUTHN_RP_ID"):  # passkeys locally: the inbox at http://<rp id>:<port>
            os.environ.setdefault("BATON_WEBAUTHN_ORIGINS", f"http://{rp_id}:{self._http.server_address[1]}")
        _reset_cached_settings()
        if saved:
            self._restore(provisioned.table_name, saved)
        if self.data != "off":
            self._persister = persist.Persister(data_file, provisioned.table_name, token)
            self._persister.start()
        threading.Thread(target=self._http.serve_forever, args=(0.1,), name="baton-api", daemon=True).start()
        creation = (clients["stepfunctions"], provisioned, self._warm_up_api, self._install_sfn_fixes)
        threading.Thread(target=self.workflows.create, args=creation, name="baton-workflows", daemon=True).start()
        self._start_schedules()

        self.info = LocalInfo(
            api_url=api_url,
            token=token,
            moto_url=moto_url,
            provisioned=provisioned,
            startup_seconds=time.perf_counter() - started,
        )
        # Whole or not at all (a reader never sees it half written), 0600: it holds the bearer token.
        write_private(self.state_dir / STATE_FILE, json.dumps(self.info.to_json(), indent=2))
        return self.info

    def inbox_login_url(self) -> str:
        """A one-time sign-in link for the web inbox (baton/local/inbox.py)."""
        if self.inbox is None:
            raise RuntimeError("the local stack is not started")
        return self.inbox.login_url()

    def _restore(self, table_name: str, saved: persist.Saved) -> None:
        """The saved table back in the current key layout; the hosted runs whose executions were lost, closed."""
        from baton.runtime.migrations import index_key_migrations
        from baton.runtime.wiring import services

        persist.restore(table_name, saved.items)
        index_key_migrations(services().core)  # what `baton migrate index-keys` runs on a deployed table
        self.restored_items = len(saved.items)
        self.closed_runs = persist.close_interrupted_runs(services().core, saved.items)

    def _start_schedules(self) -> None:
        """Stand-in for the deployment's EventBridge schedules: each scheduled function at its rate, by its handler."""
        for spec in FUNCTIONS:
            if spec.schedule:
                interval = self.schedule_overrides.get(spec.name, schedule_seconds(spec.schedule))
                threading.Thread(
                    target=self._run_on_schedule, args=(spec.name, interval), name=f"schedule-{spec.name}", daemon=True
                ).start()

    def _run_on_schedule(self, name: str, interval: float) -> None:
        while not self._stopping.wait(interval):
            self._invoke_logged(name, {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}})

    def wait_for_workflows(self, timeout: float = WORKFLOWS_READY_SECONDS) -> float:
        """Block until the state machines exist; returns the seconds their creation took."""
        self.workflows.wait(timeout)
        return self.workflows.seconds

    def _warm_up_api(self) -> None:
        """One unauthenticated request (answered 401): imports the API handler and builds its clients."""
        event = {"httpMethod": "GET", "path": "/api/runs/warm-up", "headers": {}, "requestContext": {}}
        self.dispatcher.invoke("api", event)

    def _invoke_logged(self, name: str, event: dict[str, Any]) -> None:
        """A function run by the stack itself (its schedules, its lifecycle rule): a failure is logged."""
        payload, errored = self.dispatcher.invoke(name, event)
        if errored:
            logging.getLogger("baton").warning("%s failed: %s", name, payload.get("errorMessage"))

    def _invoke_api(self, event: dict[str, Any]) -> dict[str, Any]:
        payload, errored = self.dispatcher.invoke(function_for_path(str(event.get("path") or "")), event)
        if errored:
            raise RuntimeError(f"{payload.get('errorType')}: {payload.get('errorMessage')}")
        return cast("dict[str, Any]", payload)

    def stop(self) -> None:
        """Stop serving (the API and, meanwhile, the emulator's port), save the data. Nothing here waits on a
        request or an execution: request threads are daemons, and parked executions are simply abandoned."""
        self._stopping.set()
        # the emulator's server polls for its shutdown every 0.5 s: meanwhile the API stops and the data is saved
        moto = threading.Thread(target=self._moto.stop if self._moto else lambda: None, name="baton-stop-moto")
        moto.start()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._persister is not None:
            self._persister.stop()
        moto.join()
        if self._persister is not None:
            self._persister.close()  # after the emulator stopped: a write still in flight was journaled
        with self._installing:
            self._exit_stack.close()
        state_file = self.state_dir / STATE_FILE
        if self.info and state_file.exists():
            with contextlib.suppress(OSError, ValueError):
                if json.loads(state_file.read_text()).get("api_url") == self.info.api_url:
                    state_file.unlink()


def _vapid_key(state_dir: Path) -> Path:
    """Web Push's key, made once and kept: a browser's subscription (bound to it) outlives a restart."""
    path = private_dir(state_dir) / "vapid.pem"
    if not path.exists():
        from baton.channels.push.web_push import VapidKeys

        write_private(path, VapidKeys.generate().private_pem.decode())
    return path.resolve()


def _reset_cached_settings() -> None:
    from baton.channels.email.config import cached_link_key, email_config
    from baton.runtime.settings import get_settings
    from baton.runtime.wiring import services

    get_settings.cache_clear()
    services.cache_clear()
    email_config.cache_clear()
    cached_link_key.cache_clear()
