"""The merge step of the review-and-merge gate: git plumbing (`gitcmd`), the bounded diff (`diff`), the
squash algorithm (`squash`), its command line (`cli`, run as `python -m baton.merge`) and the one path
that reports an outcome to Step Functions (`report`, also `python -m baton.merge.report`).

Runs in the CodeBuild merge build and as a local subprocess."""
