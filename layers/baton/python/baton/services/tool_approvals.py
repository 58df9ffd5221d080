"""Tool-call approval (issue 30): a blocking pause (`asks.BlockingPause`: no task token, the adapter's waiter
long-polls `get`, a read past the deadline takes the declared default, deny unless declared), so an unanswered
call never runs. The decision stores the digest of the call it allows; `consume` uses it once. An approve with
`remember` is a grant: a later matching call in its scope is answered at once, naming the grant.

A policy (issue 31, `Core.policy`) decides every new call first: an enforced allow or deny answers it at once
as `policy:<rule>` (nobody notified, no timer), a rule's `@ask` names its approvers, quorum and deadline; a
shadow policy, or no rule matched, changes nothing. Each decision is logged as `policy_decided`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton.contracts.deadline_tasks import Settled
from baton.contracts.page_tokens import PageCursor, decode_scoped_page_token, encode_page_token, invalid_page_token
from baton.contracts.tool_approvals import (
    ConsumeResult,
    DecidedToolApproval,
    GrantList,
    GrantRevoked,
    ToolApprovalPage,
    tool_spec,
)
from baton.domain.ballot import Voter
from baton.domain.tool_calls import CONSUMED, StoredDecision, open_call_key, stored_decision, timeout_ladder
from baton.domain.tool_rulings import active_grants, call_create, usable
from baton.errors import ConflictError, NotFoundError
from baton.events import ToolGrantRevoked
from baton.models import Interaction, RunSummary, status_of
from baton.policy.source import decide_or_ask
from baton.services.asks import BlockingPause
from baton.services.deadlines import arm_interaction
from baton.services.decide import decide
from baton.services.pause_answers import conflict
from baton.services.tool_approval_answers import DecideAgainError, ToolApprovalAnswers

if TYPE_CHECKING:
    from baton.contracts.questions import AnswerResult
    from baton.contracts.tool_approvals import ToolApprovalRequest
    from baton.domain.ladder import Ladder

KIND = "tool_approval"
# reads of a call's open approval after losing its conditional create: the winner's is found on the next,
# unless it was used or decided in between (then a new one is created)
CREATE_ATTEMPTS = 3


class ToolApprovalService(BlockingPause):
    kind, noun = KIND, "tool approval"

    def request(self, run_id: str, body: ToolApprovalRequest, *, caller: str) -> tuple[Interaction, bool]:
        """The approval of this call, and whether this request created it: a repeat of a call still pending
        (or approved, unused) in the same session finds that one by the call's key; of identical requests at
        once one creates it (a conditional write), the others return it; an active grant answers at once."""
        core = self.core
        ladder = timeout_ladder(body.ladder(), body.call)
        core.check_notify(body.notify)
        run = core.ensure_run(run_id)
        key = open_call_key(body.session, body.call.digest)
        for _ in range(CREATE_ATTEMPTS):
            open_id = core.store.open_tool_call(run_id, key)
            found = core.store.get_interaction(run_id, open_id) if open_id is not None else None
            if found is not None and usable(found):  # past its deadline: this repeat hears the default
                return self._expire_if_due(found), False
            try:
                return self._create(run, body, ladder, caller=caller, key=key, replacing=open_id), True
            except ConflictError:  # an identical request created its approval first: return that one
                continue
        raise ConflictError(
            f"the approval of this {body.call.tool} call in run {run_id} is changing too fast; send the request again",
            details={"run_id": run_id, "reason": "contention"},
        )

    def _create(
        self,
        run: RunSummary,
        body: ToolApprovalRequest,
        ladder: Ladder,
        *,
        caller: str,
        key: str,
        replacing: str | None,
    ) -> Interaction:
        """The service's part of the create (`call_create` rules it): the reads (the run's grants, the
        policy), the one write, and, when a person is asked, the notice and the timer."""
        core, run_id = self.core, run.run_id
        spec = body.spec(requested_by=caller)
        answered = core.store.list_run_interactions(run_id, kind=KIND, status="answered")
        grant = next((g for g in active_grants(core.now(), answered) if g.applies_to(spec)), None)
        decided = decide_or_ask(
            core.policy, lambda: body.policy_query(run, granted=grant is not None, at=core.now()), run_id=run_id
        )
        iid = core.ids.new_id()
        create = call_create(body, spec, ladder, decided, grant, interaction_id=iid, caller=caller, now=core.now())
        expires_at = core.deadline_of(create.timeout_seconds)
        i = core.new_interaction(run_id, create.request, expires_at=expires_at, interaction_id=iid, state=create.state)
        events = [core.new_event(run_id, payload) for payload in create.records]
        core.store.put_tool_call_approval(i, key, replacing=replacing, events=events)  # one write, chained
        if create.asked:
            core.notify(i, "human_input_requested")
            arm_interaction(core, i)
        return i

    def answer(
        self,
        run_id: str,
        interaction_id: str,
        answer: Any,
        *,
        caller: str,
        groups: frozenset[str] = frozenset(),
        via: str | None = None,
        passkey: dict[str, Any] | None = None,
    ) -> AnswerResult:
        """A person's decision (POST .../interactions/{id}/answer), by `decide` with `ToolApprovalAnswers`."""
        policy = ToolApprovalAnswers(self.core, sent=answer, passkey=passkey, via=via)
        while True:  # a write that lost (decided, or claimed, under it) decides again; a passkey stays confirmed
            pending = self.current(run_id, interaction_id)  # past it: its default first
            decision = stored_decision(answer, tool_spec(pending).call)
            try:
                return decide(self.core, policy, pending, decision, Voter(caller, groups))
            except DecideAgainError:
                continue

    def consume(self, run_id: str, interaction_id: str, digest: str) -> ConsumeResult:
        """The adapter, right before the tool runs: once per approval, for the call it approved (409 else)."""
        i = self.current(run_id, interaction_id)
        st = i.state
        stored = StoredDecision.to_use(interaction_id, digest, status=st.status, answer=st.answer, reason=st.reason)
        if not isinstance(stored, StoredDecision):
            raise conflict(i, stored.message, **stored.details)
        new = status_of(st, "answered", answer=st.answer, by=st.answered_by, at=st.answered_at, reason=CONSUMED)
        try:
            self.core.store.transition_interaction(i, new)
        except ConflictError:  # another consume (or a revoke) first: decide again on what is stored now
            return self.consume(run_id, interaction_id, digest)
        arguments = stored.arguments if stored.arguments is not None else tool_spec(i).call.arguments
        return ConsumeResult(interaction_id=interaction_id, digest=digest, arguments=arguments)

    def grants(self, run_id: str) -> GrantList:
        self.core.require_run(run_id)
        found = self.core.store.list_run_interactions(run_id, kind=KIND, status="answered")
        return GrantList(run_id=run_id, grants=active_grants(self.core.now(), found))

    def revoke(self, run_id: str, grant_id: str, *, caller: str) -> GrantRevoked:
        """Revoke a grant (stored on the approve that carried it, with who and when); 404 when not active."""
        i = self._load(run_id, grant_id)
        if not any(g.grant_id == grant_id for g in active_grants(self.core.now(), [i])):
            raise NotFoundError(f"no active grant {grant_id} in run {run_id}", details={"grant_id": grant_id})
        st = i.state
        answer = {**st.answer, "revoked_by": caller, "revoked_at": self.core.now()}
        new = status_of(st, "answered", answer=answer, by=st.answered_by, at=st.answered_at, reason=st.reason)
        revoked = ToolGrantRevoked(grant_id=grant_id, tool=tool_spec(i).call.tool, by=caller)
        try:  # the revoke and its decision-log record in one write
            self.core.store.transition_interaction(i, new, with_records=[self.core.new_event(run_id, revoked)])
        except ConflictError:
            return self.revoke(run_id, grant_id, caller=caller)
        return GrantRevoked(grant_id=grant_id, run_id=run_id, revoked_by=caller)

    def take_due_defaults(self) -> list[Settled]:
        """The reconciler's pass: a pending approval past its deadline takes its default even if nobody reads it."""
        ended = [self._expire_if_due(i) for i in self.core.store.list_due(KIND, self.core.now())]
        return [Settled(run_id=i.run_id, interaction_id=i.interaction_id) for i in ended if i.state.outcome]

    def list_decided(
        self, *, since: str | None = None, limit: int = 50, next_token: str | None = None
    ) -> ToolApprovalPage:
        """One page of decided approvals across runs (`GET /api/tool-approvals`): one Query of the by_status
        index reading at most `limit` items; those made before `since` (ISO) are left out after the read, so a
        page may be short. The token carries the store's position, bound to `since`."""
        scope: list[str | None] = [since]
        cursor = decode_scoped_page_token(next_token, PageCursor, scope, "since") if next_token else None
        if cursor is not None and cursor.k is None:  # a token always continues from a position
            raise invalid_page_token()
        found, last = self.core.store.page_interactions(
            KIND, status="answered", limit=limit, start=cursor.k if cursor else None
        )
        views = [DecidedToolApproval.of(i) for i in found if since is None or i.created_at >= since]
        token = encode_page_token(PageCursor(k=last, f=scope), sort_keys=True) if last else None
        return ToolApprovalPage(approvals=views, count=len(views), next=token)
