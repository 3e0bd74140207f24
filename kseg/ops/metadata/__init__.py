"""``kseg metadata``: the cluster image of a KRaft metadata log, its history, diffs and a check of the disk.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``at`` -- ``--at OFFSET|ISO-8601|ms`` into a :class:`kseg.metadata.Target`;
* ``show`` -- the image at a point (``kseg metadata DIR``);
* ``history`` -- every change of one topic, partition, config key, principal's ACLs or broker;
* ``diff`` -- the entities that differ between two points.

The replay itself is the library :mod:`kseg.metadata`.  Nothing here prints or exits.
"""
