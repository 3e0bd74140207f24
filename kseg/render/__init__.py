"""Presentation: text, JSON Lines and rich tables built from ops results (the only place rich is imported)."""
