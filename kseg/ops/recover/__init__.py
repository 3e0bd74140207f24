"""``kseg recover``: what Kafka keeps of a damaged segment, partition or log directory, written as new files.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``run`` -- the file side: read, plan, write what recovery keeps;
* ``inputs`` -- the arguments expanded into segments, partitions and log directories;
* ``kafka`` -- the loading model applied to the inputs;
* ``kept`` -- the files Kafka keeps, replayed on a directory listing;
* ``output`` -- the output directory written in an order a kill cannot break;
* ``report`` -- the report's kinds;
* ``topics`` -- topic ids and partition metadata carried over.

Nothing here prints or exits: ``kseg.render`` and ``kseg.commands`` do.
"""
