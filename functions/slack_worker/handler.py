"""The Slack worker (invoked asynchronously by `slack_interactions` after its ack): answer as the mapped
operator through the API's services, then update the Slack message in place
(`baton/channels/slack/worker.py`). Env: as `slack_interactions`, plus `SLACK_BOT_TOKEN` (or the app
secret's `bot_token`) and `SLACK_API_URL`."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from baton.runtime.observability import logger

if TYPE_CHECKING:
    from baton.channels.slack.worker import SlackWorker


@cache
def _worker() -> SlackWorker:
    from baton.channels.slack.app import app_config, build_worker

    return build_worker(app_config())


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from baton.channels.slack.jobs import SlackJob

    job = SlackJob.from_event(event)
    outcome = _worker().run(job)
    logger.info(
        "slack job done", extra={"run_id": job.run_id, "interaction_id": job.interaction_id, "outcome": outcome}
    )
    return {"outcome": outcome}
