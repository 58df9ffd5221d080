"""The merge step of the review-and-merge gate: git plumbing (`gitcmd`), the bounded diff (`diff`), the
squash algorithm (`squash`), its command line (`cli`, run as `python -m baton.merge`) and the gate's
build (`build`, `python -m baton.merge.build`: the bounded diff or the merge, reported into Baton's
table; the one path, in the CodeBuild project and as the local stack's subprocess)."""
