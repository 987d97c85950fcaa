"""The proxy's connections to its upstream: several small httpx pools instead of one large one.

httpcore's pool (under httpx) looks at every connection it holds each time a request starts or an answer is
closed, and for each idle one asks the socket whether the server has closed it (a few system calls), and counts
the idle ones again inside that loop. That work grows with the square of the connections in one pool: with 200
streams at once it was a quarter of the proxy's time, more than forwarding the bytes. So an exchange takes the
least busy of several clients, each holding at most :data:`PER_POOL` exchanges; a new client is opened when all
are that busy. Under light traffic every exchange goes to the first client (its connections are reused, as with
one pool); the clients stay open until the proxy stops, each keeping at most :data:`PER_POOL` idle connections,
which httpx closes after its keep-alive expiry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx

# Exchanges at once per client: where the pool's scan costs less than the rest of an exchange.
PER_POOL = 16


class _Pool:
    __slots__ = ("client", "active")

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client, self.active = client, 0


class UpstreamPools:
    """httpx clients to one upstream; :meth:`client` lends the least busy one for one exchange."""

    def __init__(self, connect_timeout: float) -> None:
        self.connect_timeout = connect_timeout
        self._pools: list[_Pool] = []

    def _open(self) -> _Pool:
        timeout = httpx.Timeout(connect=self.connect_timeout, read=None, write=None, pool=None)
        client = httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False,
                                   limits=httpx.Limits(max_connections=None, max_keepalive_connections=PER_POOL))
        for name in list(client.headers.keys()):  # no Accept, User-Agent, … of our own
            del client.headers[name]
        pool = _Pool(client)
        self._pools.append(pool)
        return pool

    @contextlib.contextmanager
    def client(self) -> Iterator[httpx.AsyncClient]:
        """A client for one exchange, counted as busy until the block ends (the answer read or dropped)."""
        pool = min(self._pools, key=lambda p: p.active) if self._pools else None  # the first of the least busy
        if pool is None or pool.active >= PER_POOL:
            pool = self._open()
        pool.active += 1
        try:
            yield pool.client
        finally:
            pool.active -= 1

    @property
    def size(self) -> int:
        """How many clients are open."""
        return len(self._pools)

    async def aclose(self) -> None:
        pools, self._pools = self._pools, []
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.client.aclose()
