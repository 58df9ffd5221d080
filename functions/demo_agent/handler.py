"""The demo's "draft" node: posts its questions through the question service and returns at once with
their ids ("question posted; keep working"). The workflow's await gate is the sync point.

Input: {run_id, node, questions: [{question, options?, allow_free_text?, timeout_seconds?, remind_after?,
escalate_after?, escalate_to?, on_timeout?}], map_item?} (a question's ladder needs its timeout_seconds)
Output: {run_id, node, question_ids: [...], status: "question posted; keep working"}
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from baton.domain.fields import NodeName, RunId, TimeoutSeconds
from baton.domain.ladder import LadderFields
from baton.runtime.observability import logger, tracer
from baton.runtime.wiring import services


class DemoQuestion(LadderFields):
    question: str = Field(min_length=1)
    options: list[str] | None = None
    allow_free_text: bool | None = None
    timeout_seconds: TimeoutSeconds | None = None


class DemoAgentRequest(BaseModel):
    run_id: RunId
    node: NodeName
    questions: list[DemoQuestion] = Field(default_factory=list)
    map_item: int | str | None = None  # pass $$.Map.Item.Index if this ever runs in a Map: it is refused


@logger.inject_lambda_context
@tracer.capture_lambda_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from baton.contracts.questions import POSTED, AskRequest

    request = parse(event=event, model=DemoAgentRequest)
    questions = services().questions
    caller = f"agent:{request.node}"
    ids = [
        questions.ask(
            request.run_id,
            AskRequest(node=request.node, map_item=request.map_item, **q.model_dump(exclude_defaults=True)),
            caller=caller,
        ).interaction_id
        for q in request.questions
    ]
    return {"run_id": request.run_id, "node": request.node, "question_ids": ids, "status": POSTED}
