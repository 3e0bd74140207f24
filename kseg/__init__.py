"""kseg: forensics for Apache Kafka log segment files.

Layers, bottom up (imports only point downward):
``errors`` (the exception hierarchy, refusals, exit codes) <- ``format`` (every
byte layout; bytes <-> objects) <- ``segment``, ``index`` (the read-only mapped
reader, naming, index rules, the atomic writer) <- ``recovery`` (Kafka's
recovery rules) <- ``ops`` (dump, verify, ...; return data, never print) <- the
edge: ``render``, ``commands`` (one thin click command each), ``cli`` (where
errors become exit codes), ``spark``.
"""

__version__ = "0.1.0"
