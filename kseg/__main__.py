"""``python -m kseg`` runs the command line."""

from kseg.cli import main

main()
