"""The recovery core: Kafka's rules for what a broker rebuilds, keeps and cuts when it loads a log.

* :mod:`kseg.recovery.indexes` -- ``LogSegment.recover``: the valid prefix of a
  segment and the ``.index``/``.timeindex``/``.txnindex`` it leaves;
* :mod:`kseg.recovery.producer_state` -- ``ProducerStateManager``'s
  transaction bookkeeping and the log replay of ``rebuildProducerState``.

``reindex``, ``recover``, ``verify`` and ``convert`` take every statement of
what Kafka does from here; none keeps a rule of its own.
"""
