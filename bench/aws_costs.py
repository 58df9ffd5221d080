"""How many AWS calls and DynamoDB capacity units does a pause cost? Counted on the embedded local stack
with a botocore `before-call` hook on every client (the same calls a deployed stack makes; figures
printed, never asserted):

  question life     parts/question_life.py: one async question's whole life (ask, the await gate's park
                    and re-check, answer and release, drain) by Lambda handler and by operation; Step
                    Functions' own Lambda invokes listed apart (state transitions on AWS); its read and
                    write capacity units, from the items' sizes by DynamoDB's rules (parts/capacity.py)
  resume, answer    parts/critical_path.py: the calls of one resume (human_pause) and one last answer
                    (await_answers), in order, and how many come before the SendTaskSuccess
  inbox page        parts/inbox_page.py: the DynamoDB calls of the inbox's first page (one Query) at
                    1,000 pending
  cost model        parts/cost_model.py: per pause kind (question with its gate, blocking ask, interrupt,
                    tool approval, review; --quick: not the review) one whole life's calls, capacity
                    units, state transitions, Lambda invocations and GB-seconds, SNS publishes and API
                    requests, and the cost of 1,000 lives at bench/prices.json's prices, beside the
                    kind's lower bound in calls

Usage: uv run python bench/aws_costs.py [--quick] [--only question life,resume and answer,inbox page,cost model]
"""

from __future__ import annotations

from parts import sections

SECTIONS: list[sections.Section] = [
    ("question life", ["parts/question_life.py"], ["parts/question_life.py", "--samples", "2"]),
    ("resume and answer", ["parts/critical_path.py", "--samples", "5"], ["parts/critical_path.py", "--quick"]),
    (
        "inbox page",
        ["parts/inbox_page.py", "--samples", "5"],
        ["parts/inbox_page.py", "--items", "20", "--runs", "4", "--samples", "2"],
    ),
    ("cost model", ["parts/cost_model.py"], ["parts/cost_model.py", "--samples", "1", "--quick"]),
]

if __name__ == "__main__":
    sections.run(__doc__ or "", SECTIONS)
