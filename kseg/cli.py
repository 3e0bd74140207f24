"""The ``kseg`` command line: thin commands over ``kseg.ops``.

Each command parses its arguments, calls one ops function, hands the result
to the renderer and picks the exit code.  Errors about input (``KsegError``)
are caught here, once, and printed as one line on stderr with the file and
byte position; ``--traceback`` shows the stack instead.
"""

from __future__ import annotations

import click

from kseg import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kseg")
def cli() -> None:
    """Forensics for Apache Kafka log segment files.

    Read-only by default: dump and verify never create or change a file.
    """


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="kseg")
