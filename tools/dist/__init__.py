"""Packaging kseg for hosts without a build toolchain: the abi3 wheel, the pure wheel, ``kseg.pyz``.

``python -m tools.dist wheel|pure|pyz`` (docs/dist.md). Nothing here is imported by kseg itself.
"""
