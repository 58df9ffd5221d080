"""`baton smoke`: the checks a team runs right after its first deploy (`checks.py`) and their report
(`report.py`). The CLI command is `baton/cli/smoke.py`."""
