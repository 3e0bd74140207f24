"""Payloads in the schema registry's framing, decoded offline (``kseg grep --decode``, ``kseg dump --decode``).

Modules (each imports only what it needs; the decoding libraries -- the
``kseg[decode]`` extra: fastavro, protobuf, proto-schema-parser -- only when a
schema of their kind is met):

* ``registry`` -- schema id -> schema, from a ``_schemas`` partition or a REST export;
* ``wire`` -- the framing: magic byte, schema id, Protobuf's message indexes;
* ``avro``, ``proto`` -- the decoders (JSON Schema payloads are JSON text: ``payload``);
* ``jsonable`` -- decoded values in kseg's JSON conventions;
* ``payload`` -- a record's key or value decoded, or the problem that stopped it;
* ``where`` -- ``--where`` expressions on decoded (or JSON) payloads.

It reads files through :mod:`kseg.segment` and prints nothing.
"""
