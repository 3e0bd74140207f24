"""``kseg triage``: what the broker's next start does to every partition of one or several log directories.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``run`` -- the measure, from the one loading model;
* ``next`` -- the next steps an on-call engineer runs.

Nothing here prints or exits: ``kseg.render`` and ``kseg.commands`` do.
"""
