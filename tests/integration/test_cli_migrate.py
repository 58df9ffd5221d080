"""`baton migrate index-keys` on a table whose pending item was stored before the all-pending index (moto):
the item gets its keys, so the inbox's every-kind page lists it; a second run changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typer.testing import CliRunner

from baton.cli.main import app
from baton.models import Interaction, InteractionStatus, PendingQuery, parse_request

if TYPE_CHECKING:
    from tests.integration.conftest import MotoStack


def test_index_keys_gives_an_old_pending_item_its_keys_once(moto_stack: MotoStack) -> None:
    table = moto_stack.provisioned.table_name
    store = moto_stack.services.core.store
    old = Interaction(
        interaction_id=f"01L{1:023d}",
        run_id="sess-1",
        created_at="2026-11-30T12:00:01.000Z",
        request=parse_request({"kind": "interrupt", "node": "interrupt", "prompt": "Ship?"}),
        state=InteractionStatus(),
    )
    store.put_interaction(old)
    moto_stack.clients["dynamodb"].update_item(  # as it was stored before the all-pending index
        TableName=table,
        Key={"PK": {"S": "RUN#sess-1"}, "SK": {"S": f"INT#{old.interaction_id}"}},
        UpdateExpression="REMOVE GSI3PK, GSI3SK",
    )
    assert store.page_all_pending(PendingQuery())[0] == []

    first = CliRunner().invoke(app, ["migrate", "index-keys", "--table", table])
    assert first.exit_code == 0, first.output
    assert "1 pending item(s) given the all-pending index keys" in first.output
    assert [i.interaction_id for i in store.page_all_pending(PendingQuery())[0]] == [old.interaction_id]

    again = CliRunner().invoke(app, ["migrate", "index-keys", "--table", table])
    assert again.exit_code == 0, again.output
    assert "0 pending item(s) given the all-pending index keys" in again.output
