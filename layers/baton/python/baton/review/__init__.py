"""Review-and-merge gate: bounded diffs of a run's commits (the merge itself is `baton.merge.squash`)."""
