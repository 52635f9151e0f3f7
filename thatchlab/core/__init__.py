"""The foundation every other package builds on.

Errors, parameter dataclasses and their vocabularies, time parsing,
JavaScript number text, the one cosine function and its growable matrix,
progress bars, the production schemas, and the one safe SQLite opener. Nothing
here knows about an engine.
"""
