"""``kseg diff``: compare the replicas of one partition offline, and what each choice of leader throws away.

Modules (each imports only the ones it needs, never this ``__init__``):

* ``replica`` -- each replica as Kafka's next start loads it (the loading model), its high
  watermark and its epoch lineage from the cache and from the batches;
* ``batches`` -- the batches of a loaded replica, in offset order, one light tuple each;
* ``truncation`` -- Kafka 4.3's follower truncation for a (leader, follower) pair;
* ``compare`` -- two replicas range by range: identical, same records in other batches, different;
* ``consumers`` -- committed offsets of ``__consumer_offsets`` that land in a truncated range;
* ``export`` -- the batches only one replica holds, written as segments;
* ``run`` -- all of it for a set of replicas, and the recommendation.

Nothing here prints or exits: ``kseg.render.diff`` and ``kseg.commands.diff`` do.
"""
