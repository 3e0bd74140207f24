"""The recovery core: Kafka's rules for what a broker rebuilds, keeps and cuts when it loads a log.

* :mod:`kseg.recovery.indexes` -- ``LogSegment.recover``: the valid prefix of a
  segment and the ``.index``/``.timeindex``/``.txnindex`` it leaves
  (:func:`~kseg.recovery.indexes.build_indexes`, walking with the one batch walker);
* :mod:`kseg.recovery.index_compare` -- how an index on disk compares with
  that rebuild (a missing ``.txnindex`` equals an empty one; a never-trimmed tail);
* :mod:`kseg.recovery.producer_state` -- ``ProducerStateManager``'s
  transaction bookkeeping and the log replay of ``rebuildProducerState``;
* :mod:`kseg.recovery.plan`, :mod:`kseg.recovery.salvage`,
  :mod:`kseg.recovery.segment_plan` -- what ``kseg recover`` keeps of a
  segment: Kafka's prefix, or every intact batch past the damage that
  Kafka's recovery would accept in the output, and what is lost;
* :mod:`kseg.recovery.loading` -- the one model of Kafka 4.3.0's log loading
  at broker start (``LogManager.loadLogs``, ``LogLoader.load``): which
  segments it recovers, truncates or deletes, what it throws, and every file
  it changes.

``reindex``, ``recover``, ``verify`` and ``convert`` take every statement of
what Kafka does from here; none keeps a rule of its own.  Nothing here
writes a file; :mod:`~kseg.recovery.loading` reads the log directory's
marker and checkpoints through :mod:`kseg.segment`.
"""
