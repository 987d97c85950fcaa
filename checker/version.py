"""The release of sse-check, in a module of its own: reports and commands name it, and importing it pulls in
nothing (the package's ``__init__`` also lazily offers the public API, which imports most of the checker)."""

__version__ = "0.1.0"
