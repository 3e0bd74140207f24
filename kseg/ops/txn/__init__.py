"""``kseg txn``: transactions, the last stable offset, hanging transactions and stuck groups, offline.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``run`` -- per partition, the replay and the verdict;
* ``replay`` -- control records and data batches replayed into transactions;
* ``state`` -- producer state from snapshots and the log;
* ``coordinator`` -- the transaction coordinator's log (__transaction_state);
* ``verdict`` -- what each finding means and what to do.

Nothing here prints or exits: ``kseg.render`` and ``kseg.commands`` do.
"""
