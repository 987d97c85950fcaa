"""The live side of sse-check: the replay server (``serve``) and its fault injection, the prober (``probe``,
``probe_run``), the checking proxy (``proxy``, ``proxy_watch``), the conversation history checks
(``history``), and each dialect's requests and answers (``adapters``).

The I/O (sockets, the clock) is in ``probe``, ``proxy`` and ``serve``, which only feed bytes to the core;
``history``, ``outcome`` and the adapters are pure.
"""
