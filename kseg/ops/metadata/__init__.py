"""``kseg metadata``: the cluster image of a KRaft metadata log, its history, diffs and a check of the disk.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``show`` -- the image at a point (``kseg metadata DIR``);
* ``history`` -- every change of one topic, partition, config key, principal's ACLs or broker;
* ``diff`` -- the entities that differ between two points;
* ``check`` -- the image against the partition directories of a broker's log directories.

The replay itself is the library :mod:`kseg.metadata`.  Nothing here prints or exits.
"""
