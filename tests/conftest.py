"""Project-wide test setup: pytest's own ``pytester`` fixture, for the pytest plugin's tests.

tests/real_server (a real llama-server, built from source by the ``real-server`` extra) is collected only
when ``SSE_CHECK_REAL_SERVER=1`` (``make test-all``): ``make test`` never starts it.
"""

import os

import pytest

pytest_plugins = ["pytester"]

collect_ignore = [] if os.environ.get("SSE_CHECK_REAL_SERVER") == "1" else ["real_server"]


# pytest-xdist's workers (make test, make check) start with $COLUMNS and $LINES set: the tests' subprocesses must
# see the environment the suite was started with (sse-check wraps its text report at $COLUMNS).
_TERMINAL = ("COLUMNS", "LINES")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):  # type: ignore[no-untyped-def]  # xdist's controller, for each worker
    node.workerinput["sse_check_terminal"] = {name: os.environ.get(name) for name in _TERMINAL}


def pytest_configure(config):  # type: ignore[no-untyped-def]
    given = getattr(config, "workerinput", {}).get("sse_check_terminal")
    for name, value in (given or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_addoption(parser):  # type: ignore[no-untyped-def]
    parser.addoption(
        "--update-snapshots", action="store_true", default=False,
        help="rewrite tests/snapshots/ from the corpus (tests/test_snapshots.py) instead of comparing",
    )


# The kind of each test, by where it lives (pyproject.toml registers the markers): `pytest -m unit` etc., and
# `make check`, the inner loop, runs `unit and policy`. The first prefix that a test's path (relative to tests/)
# starts with decides; everything else is a unit test. A new test file of another kind adds its line here.
KINDS: tuple[tuple[str, str], ...] = (
    ("real_server/", "real_server"),
    ("live/", "live"),
    ("report/test_html_browser.py", "live"),  # a real Chromium, started for the session
    ("test_pytest_plugin", "live"),  # inner pytest runs in subprocesses
    ("oracles/", "oracle"),
    ("test_client_oracles.py", "oracle"),
    ("test_chat_oracles.py", "oracle"),
    ("test_messages_oracles.py", "oracle"),
    ("test_real_clients.py", "oracle"),
    ("test_oracle_agreement.py", "oracle"),
    ("test_vllm_captures.py", "oracle"),
    ("test_snapshots.py", "corpus"),
    ("test_corpus.py", "corpus"),
    ("test_native.py", "corpus"),
    ("test_chat_corpus.py", "corpus"),
    ("test_real_openai.py", "corpus"),
    ("test_litellm_captures.py", "corpus"),
    ("test_transformers_captures.py", "corpus"),
    ("test_http_captures.py", "corpus"),
    ("test_schema_check.py", "corpus"),
    ("test_fuzz", "corpus"),
    ("test_properties.py", "corpus"),
    ("archive/test_big_archive.py", "corpus"),
    ("test_installed.py", "policy"),
    ("test_docs.py", "policy"),
    ("test_ci_docs.py", "policy"),
    ("test_layering.py", "policy"),
    ("test_self_contained.py", "policy"),
    ("test_structure.py", "policy"),
    ("test_peer_coverage.py", "policy"),
    ("test_startup_docstrings.py", "policy"),
)
KIND_NAMES = ("unit", "corpus", "oracle", "live", "real_server", "policy")


def kind_of(relative: str) -> str:
    """The kind of a test file by its path relative to tests/ (``live/test_probe.py`` -> ``live``)."""
    return next((kind for prefix, kind in KINDS if relative.startswith(prefix)), "unit")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        relative = os.path.relpath(str(item.path), here).replace(os.sep, "/")
        item.add_marker(getattr(pytest.mark, kind_of(relative)))
