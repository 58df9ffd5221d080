"""Every counted vote is a chained decision (moto, the real adapter's transactions): `approval_recorded`
advances the run's decision-log head in the vote's own transaction, so 32 concurrent votes and other
decisions on one run form one chain with no gap or fork, and `audit verify` covers every vote."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from baton.contracts import AskRequest
from baton.domain.approval import ApprovalPolicy
from baton.services.audit import AuditService

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack

RUN = "audit-votes"
VOTERS = 16
ANSWERS = 16


def test_concurrent_votes_and_answers_on_one_run_form_one_chain(moto_stack: MotoStack) -> None:
    questions = moto_stack.services.questions
    quorum = questions.ask(
        RUN, AskRequest(node="deploy", question="ship?", approval=ApprovalPolicy(approvals=VOTERS)), caller="agent"
    )["interaction_id"]
    plain = [
        questions.ask(RUN, AskRequest(node="draft", question=f"Q{n}?"), caller="agent")["interaction_id"]
        for n in range(ANSWERS)
    ]
    barrier = threading.Barrier(VOTERS + ANSWERS)

    def vote(n: int) -> str:
        barrier.wait()
        return str(questions.answer(RUN, quorum, "approve", caller=f"voter-{n}")["status"])

    def answer(n: int) -> str:
        barrier.wait()
        return str(questions.answer(RUN, plain[n], f"a{n}", caller=f"op-{n}")["status"])

    with ThreadPoolExecutor(VOTERS + ANSWERS) as pool:
        futures = [pool.submit(vote, n) for n in range(VOTERS)] + [pool.submit(answer, n) for n in range(ANSWERS)]
        outcomes = Counter(f.result() for f in futures)
    assert outcomes["answered"] >= ANSWERS + 1, outcomes  # every plain answer and the vote that met the quorum
    records = AuditService(moto_stack.services.core.store).page(RUN, limit=500).records
    types = Counter(r.type for r in records)
    # 16 votes, the quorum's release (quorum_reached and its interaction_answered), 16 answers
    assert types == Counter({"approval_recorded": VOTERS, "quorum_reached": 1, "interaction_answered": ANSWERS + 1}), (
        types
    )
    total = VOTERS + 1 + ANSWERS + 1
    assert [r.seq for r in records] == list(range(1, total + 1))  # no gap, no fork
    voters = {r.data["by"] for r in records if r.type == "approval_recorded"}
    assert voters == {f"voter-{n}" for n in range(VOTERS)}
    verdict = AuditService(moto_stack.services.core.store).verify(RUN)
    assert verdict.valid and verdict.head_seq == total and not verdict.unchained, verdict.first_mismatch
