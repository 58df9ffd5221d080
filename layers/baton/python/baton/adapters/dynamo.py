"""DynamoDB adapter of the `Store` port (`baton/ports.py`): one class composed of one part per aggregate,
each readable alone, all on one table (no Scan anywhere; every state change is a conditional write):
- `dynamo_runs.py`: runs, their events and the decision log, queued messages (`RunStore`,
  `EventStore`, `MessageStore`);
- `dynamo_interactions.py`, `dynamo_claims.py`, `dynamo_guards.py`, `dynamo_interaction_reads.py`:
  interactions, their transitions, claims, guards, snapshot and pages (`InteractionStore`);
- `dynamo_waits.py`: parked task tokens (`WaitStore`);
- `dynamo_review_turns.py`: the review dialogue (`ReviewTurnStore`);
- `dynamo_agent_states.py`: agents' opaque states (`AgentStateStore`);
- `dynamo_approvals.py`: the votes on quorum pauses (`ApprovalStore`);
- `dynamo_aways.py`: operators away and their delegates (`AwayStore`);
- `dynamo_tool_calls.py`: the open approval of each tool call (`InteractionStore.open_tool_call`);
- `dynamo_migrations.py`: the backfills and the legacy layouts still read.
They share `dynamo_table.py` (the client, paged reads, the chained writes of events) and
`dynamo_items.py` (the codecs, the keys and the retry rules). Links, mail marks and inbox sessions
have their own adapters (`answer_links.py`, `mail_marks.py`, `inbox_sessions.py`)."""

from __future__ import annotations

from baton.adapters.dynamo_agent_states import DynamoAgentStates
from baton.adapters.dynamo_approvals import DynamoApprovals
from baton.adapters.dynamo_aways import DynamoAways
from baton.adapters.dynamo_claims import DynamoClaims
from baton.adapters.dynamo_interaction_reads import DynamoInteractionReads
from baton.adapters.dynamo_interactions import DynamoInteractions
from baton.adapters.dynamo_migrations import DynamoMigrations
from baton.adapters.dynamo_review_turns import DynamoReviewTurns
from baton.adapters.dynamo_runs import DynamoRuns
from baton.adapters.dynamo_tool_calls import DynamoToolCalls
from baton.adapters.dynamo_waits import DynamoWaits


class DynamoStore(
    DynamoRuns,
    DynamoInteractions,
    DynamoClaims,
    DynamoInteractionReads,
    DynamoWaits,
    DynamoReviewTurns,
    DynamoAgentStates,
    DynamoApprovals,
    DynamoAways,
    DynamoToolCalls,
    DynamoMigrations,
):
    """Every store port over one table (`DynamoTable.__init__`: the table name, the client, the TTL)."""
