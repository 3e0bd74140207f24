"""One verdict per broker: the facts of the next start, each with a severity and an exit code.

Every reading command (triage, verify, ``recover --dry-run``, txn, ``spark verify``) takes its
exit code and its headline from here, so a script gating on any of them decides the same way
(docs/cli.md, "One verdict").  The facts are read off the one model of the next start
(:mod:`kseg.recovery.loading`); nothing here reads a file the model has not named.

Modules (each imports only the ones above it in this list, never this ``__init__``):

* ``facts`` -- the fact kinds and one :class:`~.facts.Fact`;
* ``table`` -- fact kind -> severity -> exit code, and the headline;
* ``served`` -- damage the start leaves in place and serves: the offsets no fetch can read;
* ``groups`` -- consumer groups whose committed offsets lie in lost ranges of ``__consumer_offsets``;
* ``unstable`` -- open transactions the start does not see (R6.3a): served to read_committed consumers;
* ``partition`` -- the loss of one partition and its facts; a log directory's and the broker's facts.
"""
