"""The live side of sse-check: the replay server (``serve``) and its fault injection; later the prober and proxy.

Everything here does I/O (sockets, the clock) and only feeds bytes to the core.
"""
