"""``kseg grep``: find records by key, value, header, offset, time, producer and transaction, offline.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``query`` -- the predicates (:class:`~kseg.ops.grep.query.Query`) and the needles a batch must hold;
* ``txnspans`` -- each transactional batch's transaction state, replayed per partition;
* ``search`` -- one segment: batch headers, needles in the file's bytes, then records;
* ``run`` -- the units of work, in order, on one core or many.

Nothing here prints or exits: ``kseg.render.grep`` and ``kseg.commands.grep`` do.
"""
