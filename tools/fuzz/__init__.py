"""kseg's own fuzz campaign: mutants of real and Kafka-written files, run through every command.

A bounded, seeded mutation fuzzer (``python -m tools.fuzz``, see docs/fuzzing.md): seeds are the
files under fixtures/ (fixtures/real is Kafka-written), mutants come from :mod:`tools.fuzz.mutate`,
each mutant is laid out as a log directory and every command in :mod:`tools.fuzz.commands` runs on
it as a child process under the limits of :mod:`tools.fuzz.contract`.  A failure whose bucket is in
:mod:`tools.fuzz.known` (an open, documented issue) is reported but does not fail the campaign;
any other bucket does.  Nothing here is imported by kseg.
"""
