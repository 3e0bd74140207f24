"""One module per ``kseg`` command; each is a thin click command over one ``kseg.ops`` function."""
