"""Project-wide test setup: pytest's own ``pytester`` fixture, for the pytest plugin's tests.

tests/real_server (a real llama-server, built from source by the ``real-server`` extra) is collected only
when ``SSE_CHECK_REAL_SERVER=1`` (``make test-all``): ``make test`` never starts it.
"""

import os

pytest_plugins = ["pytester"]

collect_ignore = [] if os.environ.get("SSE_CHECK_REAL_SERVER") == "1" else ["real_server"]


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption(
        "--update-snapshots", action="store_true", default=False,
        help="rewrite tests/snapshots/ from the corpus (tests/test_snapshots.py) instead of comparing",
    )
