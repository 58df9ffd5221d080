"""The decision log (`baton/domain/audit.py`): the canonical form, the chain the services build on the
in-memory store, and verify naming the first record that does not match. The DynamoDB adapter's chain
(conditional head, concurrency, records edited in the table) is tested on moto in
tests/integration/test_audit_store.py."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import pytest

from baton.api import deps
from baton.api.app import create_app
from baton.contracts import AskRequest, CancelInterrupt, ClaimInterrupt, ResumeInterrupt
from baton.domain.audit import (
    DECISION_TYPES,
    GENESIS_HASH,
    AuditHead,
    AuditRecord,
    canonical_json,
    chain,
    verify_chain,
)
from baton.domain.interrupt_spec import InterruptSpec
from baton.events import EventType
from baton.local.http_adapter import to_proxy_event
from baton.models import Event
from baton.runtime.settings import Settings
from baton.runtime.wiring import Services
from baton.services.audit import AuditService
from baton.services.claims import ClaimService
from baton.services.interrupts import InterruptService
from baton.services.questions import QuestionService
from baton.services.runs import RunService

if TYPE_CHECKING:
    from collections.abc import Iterator

    from baton.services.core import Core
    from tests.fakes.memory import MemoryStore


# ---- the canonical form ---------------------------------------------------------------------------
def test_the_rfc_8785_example_is_canonicalized_byte_for_byte() -> None:
    # RFC 8785 section 3.2.2's input (numbers, escapes, literals) and its canonical output.
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(source)) == expected.encode("utf-8")


def test_keys_are_sorted_by_utf16_code_units_at_every_level() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 (code-point order would put it after).
    value = {"b": {"z": 1, "a": 2}, "a": [{"y": 1, "x": 2}], "\U0001f600": 1, "\ufb33": 2, "B": 0}
    assert canonical_json(value) == ('{"B":0,"a":[{"x":2,"y":1}],"b":{"a":2,"z":1},"\U0001f600":1,"\ufb33":2}'.encode())


def test_the_same_object_in_another_key_order_has_the_same_bytes() -> None:
    one = json.loads('{"answer": {"db": "pg", "n": 1}, "by": "alice"}')
    other = json.loads('{"by": "alice", "answer": {"n": 1, "db": "pg"}}')
    assert canonical_json(one) == canonical_json(other) == b'{"answer":{"db":"pg","n":1},"by":"alice"}'


def test_unicode_is_utf8_unescaped_and_only_controls_are_escaped() -> None:
    assert canonical_json("é€😀\u2028/") == '"é€😀\u2028/"'.encode()
    assert canonical_json('\x00\x1f\b\f\n\r\t"\\') == b'"\\u0000\\u001f\\b\\f\\n\\r\\t\\"\\\\"'
    assert canonical_json("\ud800") == b'"\\ud800"'  # a lone surrogate, as JSON.stringify writes it


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (0.1, "0.1"),
        (100.0, "100"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (-1.5e-9, "-1.5e-9"),
        (123.456, "123.456"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53 + 1, "9007199254740993"),  # integers exactly, however large (the one documented difference)
        (-(10**30), "-1000000000000000000000000000000"),
    ],
)
def test_numbers_take_the_ecmascript_shortest_form(number: float, text: str) -> None:
    assert canonical_json(number) == text.encode()


def test_no_whitespace_and_non_json_values_are_refused() -> None:
    assert canonical_json({"a": [1, None, True, False]}) == b'{"a":[1,null,true,false]}'
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            canonical_json(bad)
    with pytest.raises(TypeError):
        canonical_json({1: "x"})
    with pytest.raises(TypeError):
        canonical_json({"a": object()})


# ---- the chain ------------------------------------------------------------------------------------
def _event(n: int, kind: EventType = EventType.INTERACTION_ANSWERED, **data: Any) -> Event:
    return Event(event_id=f"E{n:03d}", run_id="r1", type=kind, at=f"2026-01-01T00:00:{n:02d}Z", data=data)


def test_each_record_hashes_its_canonical_form_with_the_previous_hash() -> None:
    records, head = chain([_event(1, answer="pg"), _event(2, EventType.RUN_PAUSED), _event(3, answer=1.0)], AuditHead())
    assert [r.seq for r in records] == [1, 2]  # run_paused is not a decision: not chained
    first, second = records
    assert first.prev_hash == GENESIS_HASH and second.prev_hash == first.hash
    part = {
        "at": "2026-01-01T00:00:01Z",
        "data": {"answer": "pg"},
        "event_id": "E001",
        "prev_hash": GENESIS_HASH,
        "run_id": "r1",
        "seq": 1,
        "type": "interaction_answered",
    }
    assert first.hash == hashlib.sha256(json.dumps(part, separators=(",", ":")).encode()).hexdigest()
    assert head == AuditHead(seq=2, hash=second.hash)


def test_the_decision_types_are_the_decisions() -> None:
    assert {
        EventType.INTERACTION_ANSWERED,
        EventType.INTERRUPT_RESUMED,
        EventType.INTERRUPT_CLAIMED,
        EventType.INTERRUPT_CANCELLED,
        EventType.REVIEW_MERGED,
    } <= DECISION_TYPES
    assert EventType.RUN_PAUSED not in DECISION_TYPES and EventType.HUMAN_INPUT_REQUESTED not in DECISION_TYPES


def _three() -> tuple[list[AuditRecord], AuditHead]:
    return chain([_event(1, answer="a"), _event(2, answer="b"), _event(3, answer="c")], AuditHead())


def test_an_intact_chain_verifies_in_any_order() -> None:
    records, head = _three()
    verdict = verify_chain("r1", reversed(records), head)
    assert verdict.valid and verdict.records == 3 and verdict.first_mismatch is None


def test_an_edited_record_is_named_with_its_expected_and_stored_hash() -> None:
    records, head = _three()
    records[1] = records[1].model_copy(update={"data": {"answer": "evil"}})
    bad = verify_chain("r1", records, head).first_mismatch
    assert bad is not None and (bad.seq, bad.event_id, bad.problem) == (2, "E002", "hash")
    assert bad.stored == records[1].hash and bad.expected == records[1].expected_hash() != bad.stored


def test_a_record_rehashed_after_its_edit_breaks_the_next_link() -> None:
    records, head = _three()
    edited = records[1].model_copy(update={"data": {"answer": "evil"}})
    records[1] = edited.model_copy(update={"hash": edited.expected_hash()})
    bad = verify_chain("r1", records, head).first_mismatch
    assert bad is not None and (bad.seq, bad.event_id, bad.problem) == (3, "E003", "prev_hash")


def test_a_deleted_record_is_named_as_the_gap() -> None:
    records, head = _three()
    bad = verify_chain("r1", [records[0], records[2]], head).first_mismatch
    assert bad is not None and (bad.seq, bad.problem) == (2, "missing")
    assert "E003" in bad.stored


def test_a_deleted_last_record_is_found_through_the_head() -> None:
    records, head = _three()
    verdict = verify_chain("r1", records[:2], head)
    assert not verdict.valid and verdict.first_mismatch is not None
    assert (verdict.first_mismatch.seq, verdict.first_mismatch.problem) == (3, "missing")


def test_a_fork_is_named() -> None:
    records, head = _three()
    fork, _ = chain([_event(9, answer="x")], AuditHead(seq=1, hash=records[0].hash))
    bad = verify_chain("r1", [*records, *fork], head).first_mismatch
    assert bad is not None and bad.problem == "duplicate" and bad.seq == 2


def test_a_record_added_without_the_head_is_named() -> None:
    records, head = _three()
    extra, _ = chain([_event(4, answer="d")], head)
    bad = verify_chain("r1", [*records, *extra], head).first_mismatch
    assert bad is not None and (bad.seq, bad.problem) == (4, "tail")


# ---- the services chain their decisions (memory store) ----------------------------------------------
def _decide(core: Core) -> None:
    """An answer, a claim, a resume with state edits and a cancel on run r1, and one answer on r2."""
    questions, interrupts = QuestionService(core), InterruptService(core)
    asked = questions.ask("r1", AskRequest(node="draft", question="Which DB?"), caller="agent")
    questions.answer("r1", asked["interaction_id"], "postgres", caller="alice")
    first, _ = interrupts.create(InterruptSpec(session_id="r1", prompt="Deploy?", state={"env": "dev"}), caller="a")
    ClaimService(interrupts).claim(first.interaction_id, ClaimInterrupt(), operator="bob")
    interrupts.resume(first.interaction_id, ResumeInterrupt(input="yes", stateEdits=["env=prod"]), caller="bob")
    second, _ = interrupts.create(InterruptSpec(session_id="r1", prompt="Again?"), caller="agent")
    interrupts.cancel(second.interaction_id, CancelInterrupt(reason="not today"), caller="carol")
    other = questions.ask("r2", AskRequest(node="draft", question="Other run?"), caller="agent")
    questions.answer("r2", other["interaction_id"], "yes", caller="alice")


def test_every_decision_is_chained_per_run(core: Core) -> None:
    _decide(core)
    audit = AuditService(core.store)
    records = audit.page("r1").records
    assert [(r.seq, r.type) for r in records] == [
        (1, "interaction_answered"),
        (2, "interrupt_claimed"),
        (3, "interrupt_resumed"),
        (4, "interrupt_cancelled"),
    ]
    assert records[2].data["state_edits"] == ["env=prod"] and records[2].data["by"] == "bob"
    assert audit.verify("r1").valid and audit.verify("r2").valid and audit.verify("r2").records == 1


def test_verify_names_a_record_edited_in_the_store(core: Core) -> None:
    _decide(core)
    store: MemoryStore = core.store  # type: ignore[assignment]
    claimed = store.audit["r1"][1]
    store.audit["r1"][1] = claimed.model_copy(update={"data": {**claimed.data, "by": "mallory"}})
    verdict = AuditService(core.store).verify("r1")
    assert not verdict.valid and verdict.first_mismatch is not None
    assert (verdict.first_mismatch.seq, verdict.first_mismatch.event_id) == (2, claimed.event_id)


def test_pages_follow_the_chain(core: Core) -> None:
    _decide(core)
    audit = AuditService(core.store)
    first = audit.page("r1", limit=3)
    assert [r.seq for r in first.records] == [1, 2, 3] and first.next == 3
    rest = audit.page("r1", after=first.next or 0, limit=3)
    assert [r.seq for r in rest.records] == [4] and rest.next is None


# ---- the routes -----------------------------------------------------------------------------------
TOKEN = "unit-token"


@pytest.fixture
def api(core: Core) -> Iterator[Any]:
    settings = Settings.model_validate({"BATON_TABLE_NAME": "t", "BATON_LOCAL_API_TOKEN": TOKEN})
    services = Services(settings=settings, core=core, runs=RunService(core))
    deps.set_services_provider(lambda: services)
    app = create_app()

    def call(path: str, token: str = TOKEN) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        result = app.resolve(to_proxy_event("GET", path, headers, b"", "127.0.0.1"), None)
        return result["statusCode"], json.loads(result["body"])

    yield call
    deps.set_services_provider(deps._default_provider)


def test_the_verify_route_says_valid_then_names_the_edited_record(core: Core, api: Any) -> None:
    _decide(core)
    status, body = api("/api/runs/r1/audit/verify")
    assert status == 200 and body["valid"] is True and body["records"] == 4 and body["head_seq"] == 4
    store: MemoryStore = core.store  # type: ignore[assignment]
    resumed = store.audit["r1"][2]
    store.audit["r1"][2] = resumed.model_copy(update={"data": {**resumed.data, "input": "no"}})
    status, body = api("/api/runs/r1/audit/verify")
    assert status == 200 and body["valid"] is False
    bad = body["first_mismatch"]
    assert (bad["seq"], bad["event_id"], bad["problem"]) == (3, resumed.event_id, "hash")
    assert bad["stored"] == resumed.hash and bad["expected"] != resumed.hash


def test_the_audit_route_pages_by_seq_and_refuses_bad_input(core: Core, api: Any) -> None:
    _decide(core)
    status, body = api("/api/runs/r1/audit?limit=2")
    assert status == 200 and [r["seq"] for r in body["records"]] == [1, 2] and body["next"] == 2
    status, body = api("/api/runs/r1/audit?after=2&limit=2")
    assert [r["seq"] for r in body["records"]] == [3, 4] and body["next"] is None
    assert api("/api/runs/r1/audit?limit=0")[0] == 422
    assert api("/api/runs/r1/audit?after=x")[0] == 422
    assert api("/api/runs/nope/audit/verify")[0] == 404
    assert api("/api/runs/bad%20id/audit")[0] == 400


def test_an_agent_may_not_read_the_decision_log_even_of_its_own_run(core: Core, api: Any) -> None:
    from baton.api.auth import agent_token

    _decide(core)
    for path in ("/api/runs/r1/audit", "/api/runs/r1/audit/verify"):
        status, body = api(path, token=agent_token(TOKEN, "r1"))
        assert status == 403 and body["error"] == "forbidden"


# ---- the archive (deployed option: the stream -> functions/audit_archive -> the Object Lock bucket) ----
class _Sink:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put(self, key: str, body: bytes) -> None:
        self.objects.setdefault(key, body)


def _stream_image(record: AuditRecord) -> dict[str, Any]:
    return {
        "PK": {"S": f"RUN#{record.run_id}"},
        "SK": {"S": f"EVT#{record.event_id}"},
        "record": {"S": "event"},
        "event_id": {"S": record.event_id},
        "run_id": {"S": record.run_id},
        "type": {"S": record.type},
        "at": {"S": record.at},
        "data": {"S": json.dumps(record.data)},
        "seq": {"N": str(record.seq)},
        "prev_hash": {"S": record.prev_hash},
        "hash": {"S": record.hash},
    }


def test_the_stream_batch_s_chained_inserts_are_archived_once_each_in_chain_order() -> None:
    from baton.adapters.audit_archive import decision_records
    from baton.services.audit import archive

    records, _ = _three()
    unchained = {"PK": {"S": "RUN#r1"}, "SK": {"S": "EVT#X"}, "record": {"S": "event"}}
    batch = {
        "Records": [
            {"eventName": "INSERT", "dynamodb": {"NewImage": _stream_image(records[0])}},
            {"eventName": "INSERT", "dynamodb": {"NewImage": unchained}},  # not a decision
            {"eventName": "MODIFY", "dynamodb": {"NewImage": _stream_image(records[1])}},  # an edit: not archived
            {"eventName": "INSERT", "dynamodb": {"NewImage": _stream_image(records[2])}},
        ]
    }
    found = decision_records(batch)
    assert found == [records[0], records[2]]
    sink = _Sink()
    assert archive(found, sink) == 2
    key = f"runs/r1/{1:012d}-E001.json"
    assert list(sink.objects) == [key, f"runs/r1/{3:012d}-E003.json"]
    assert json.loads(sink.objects[key]) == records[0].model_dump()
    assert canonical_json(records[0].model_dump()) == sink.objects[key]


def test_the_s3_archive_puts_conditionally_and_a_second_put_of_a_key_is_a_no_op() -> None:
    from botocore.exceptions import ClientError

    from baton.adapters.audit_archive import S3AuditArchive

    calls: list[dict[str, Any]] = []

    class FakeS3:
        def put_object(self, **kwargs: Any) -> None:
            calls.append(kwargs)
            if len(calls) > 1:
                raise ClientError({"Error": {"Code": "PreconditionFailed"}}, "PutObject")

    archive = S3AuditArchive("bucket", FakeS3())
    archive.put("runs/r1/1.json", b"{}")
    archive.put("runs/r1/1.json", b"{}")  # a redelivered batch: already there
    assert calls[0]["IfNoneMatch"] == "*" and calls[0]["ChecksumAlgorithm"] == "SHA256"
    with pytest.raises(ClientError):
        S3AuditArchive("bucket", type("Broken", (), {"put_object": _raise_denied})()).put("k", b"{}")


def _raise_denied(*_: Any, **__: Any) -> None:
    from botocore.exceptions import ClientError

    raise ClientError({"Error": {"Code": "AccessDenied"}}, "PutObject")
