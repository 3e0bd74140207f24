"""``kseg reindex``: rebuild, compare and write .index, .timeindex and .txnindex files.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``run`` -- compare, write, back up -- never touching an input unasked.

Nothing here prints or exits: ``kseg.render`` and ``kseg.commands`` do.
"""
