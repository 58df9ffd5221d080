"""The merge step of the review-and-merge gate: git plumbing, the squash algorithm, its command line.

Runs in the CodeBuild merge build and as a local subprocess: `python -m baton.merge` (see `__main__`)."""
