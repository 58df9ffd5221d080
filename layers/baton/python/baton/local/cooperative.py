"""`baton dev` on greenlets: moto's Step Functions interpreter runs each execution in a thread that blocks until its
task token is answered (a timer's Wait sleeps in one): 10,000 open pauses were 13,500 threads and half a gigabyte
(issue 33). gevent makes those waits cooperative, each a greenlet of a few kilobytes on one OS thread. It patches the
standard library before anything imports it: `baton.cli.main` calls it first, for `baton dev` only."""

from __future__ import annotations


def cooperative_if_dev(argv: list[str]) -> None:
    if argv[1:2] != ["dev"] or "--help" in argv:
        return
    try:
        from gevent import monkey
    except ModuleNotFoundError:  # the `local` extra is missing: `baton dev` says how to install it
        return

    monkey.patch_all()
