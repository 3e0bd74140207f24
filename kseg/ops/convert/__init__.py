"""``kseg convert``: rewrite segments in another magic and/or codec.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``run`` -- the file operation: one segment or a partition, through a temporary, renamed in whole;
* ``source`` -- the records of the input, streamed a chunk at a time;
* ``target`` -- the output format chosen and the inputs it refuses;
* ``batches`` -- the converter: source batches into target batches;
* ``build`` -- the batch builders of each magic;
* ``fast`` -- the compiled core's encoder path;
* ``tally`` -- what was converted, skipped and dropped;
* ``txn`` -- transaction markers and producer state across the conversion.

Nothing here prints or exits: ``kseg.render`` and ``kseg.commands`` do.
"""
