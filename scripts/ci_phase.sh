#!/usr/bin/env bash
# `scripts/ci_phase.sh NAME COMMAND...`: runs one step of `make test` and, when it ends, prints one line
# with its wall time, the CPU time it and its children used, and the load average, so a CI log says
# where the time went (on a shared machine the CPU seconds are the comparable figure). Exits as COMMAND.
set -uo pipefail
name=$1
shift
TIMEFORMAT="ci phase ${name}: %1R s wall, %1U s user + %1S s sys"
time "$@"
status=$?
echo "ci phase ${name}: exit ${status}, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit "$status"
