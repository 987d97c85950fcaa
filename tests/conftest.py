"""Project-wide test setup: pytest's own ``pytester`` fixture, for the pytest plugin's tests."""

pytest_plugins = ["pytester"]
