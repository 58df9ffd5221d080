"""Policy before people (issue 31): Cedar policies a team keeps in git decide a call before a person is
asked: allow, deny, or ask (Cedar has no third effect: a `permit` annotated `@ask` is it)."""
