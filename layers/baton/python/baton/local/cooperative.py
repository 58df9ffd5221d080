"""`baton dev` on greenlets: every request, parked execution and deadline timer of the local stack is a
greenlet on one OS thread, not a thread of its own. moto's Step Functions interpreter runs each execution
in a thread that blocks on a `threading.Event` until its task token is answered (and a deadline timer's
Wait sleeps in one), so 10,000 open pauses were 13,500 threads and half a gigabyte (issue 33). gevent's
monkey patching makes those waits, `time.sleep`, sockets, queues and subprocesses cooperative: the same
moto and handler code, with an idle pause costing a greenlet's few kilobytes.

It must patch the standard library before anything imports from it, so `baton.cli.main` calls it first,
for `baton dev` only (the other commands and the SDK neither need nor install gevent)."""

from __future__ import annotations

COMMAND = "dev"


def cooperative_if_dev(argv: list[str]) -> None:
    """Patch the standard library for gevent when this process is `baton dev`."""
    if argv[1:2] != [COMMAND] or "--help" in argv:
        return
    try:
        from gevent import monkey
    except ModuleNotFoundError:  # the `local` extra is missing: `baton dev` says how to install it
        return

    monkey.patch_all()
