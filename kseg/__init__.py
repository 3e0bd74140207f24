"""kseg: forensics for Apache Kafka log segment files.

Layers, bottom up (imports only point downward):
``errors`` <- ``format`` (bytes <-> objects, one module per format) <- ``segment``,
``index`` (mmap reader and atomic writer) <- ``ops`` (dump, verify, ...; return
data, never print) <- ``cli``, ``render``, ``spark`` at the edge.
"""

__version__ = "0.1.0"
