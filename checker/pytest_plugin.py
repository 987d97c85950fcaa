"""The pytest plugin: a server's CI gates on its streams with one ``pytest`` line.

Registered under the ``pytest11`` entry point and inert unless turned on
(pytest's "non-python tests" example, pytest-mypy):

* ``pytest --sse-check-captures DIR`` (or the ini option ``sse_check_captures``)
  collects every ``*.sse`` file below DIR as one test item, linted exactly as
  ``sse-check lint`` does (a Responses, Chat Completions or Anthropic Messages
  stream, each recognised by itself unless ``--sse-check-dialect`` says), under
  the profile given by ``--sse-check-profile``, else the capture's sidecar
  (``X.profile``, or ``"profile"`` in ``X.meta.json``), else the ini option
  ``sse_check_profile``, else ``openai``;
* ``pytest --sse-check-url URL --sse-check-model M`` (or ``sse_check_url`` /
  ``sse_check_model``) adds one item per probe scenario of each dialect of
  ``--sse-check-api`` (all three by default): the suite is probed once, as
  ``sse-check probe`` would, and each item reports its scenario; a scenario a
  replay server has no capture for, or whose endpoint the server does not
  serve, is skipped.

An item fails when it has a finding at or above ``--sse-check-fail-on``
(default ``warning``); ``repr_failure`` prints the findings as the CLI's text
report does, never a traceback. ``--sse-check-baseline FILE`` hides known
findings (see ``checker.baseline``). ``-p no:sse_check`` unloads the plugin.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from checker import dialects
from checker.baseline import BaselineRun
from checker.baseline import load as load_baseline
from checker.engine import EngineOptions, LintResult
from checker.errors import UsageError
from checker.findings import Severity
from checker.profiles import PROFILES, get_profile

FAIL_ON_CHOICES = ("error", "warning", "info")
PROFILE_SIDECAR = ".profile"


# --- options -----------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sse-check", "sse-check: conformance of streamed Responses, Chat Completions and "
                                         "Anthropic Messages answers (off unless a capture directory or a "
                                         "server URL is given)")
    group.addoption("--sse-check-captures", action="append", default=[], metavar="DIR",
                    help="collect every *.sse capture below DIR as a test (repeatable)")
    group.addoption("--sse-check-url", default=None, metavar="URL",
                    help="probe the server at URL: one test per probe scenario (needs --sse-check-model)")
    group.addoption("--sse-check-model", default=None, metavar="MODEL", help="the model the probe asks for")
    group.addoption("--sse-check-api", action="append", default=[], metavar="NAMES",
                    help="the dialects probed, comma-separated (repeatable; default: responses,chat,messages as "
                         "sse-check probe; an endpoint the server does not serve skips its scenarios)")
    group.addoption("--sse-check-dialect", default=None, choices=dialects.names(),
                    help="check every capture as this API's stream (default: each capture's own, from its "
                         "X.meta.json endpoint or its first event, as sse-check lint decides)")
    group.addoption("--sse-check-scenario", action="append", default=[], metavar="NAMES",
                    help="probe only these scenarios (comma-separated; repeatable)")
    group.addoption("--sse-check-scenario-file", action="append", default=[], metavar="PATH",
                    help="add probe scenarios from a JSON/YAML file or directory (repeatable)")
    group.addoption("--sse-check-profile", default=None, choices=sorted(PROFILES),
                    help="profile for every capture and scenario (overrides sidecars; default: the sidecar, "
                         "else the ini option, else openai)")
    group.addoption("--sse-check-fail-on", default=None, choices=FAIL_ON_CHOICES,
                    help="lowest severity that fails a test (default: warning)")
    group.addoption("--sse-check-select", action="append", default=[], metavar="CODES",
                    help="only these rules (codes, prefixes or names; comma-separated; repeatable)")
    group.addoption("--sse-check-ignore", action="append", default=[], metavar="CODES",
                    help="skip these rules (repeatable)")
    group.addoption("--sse-check-baseline", default=None, metavar="FILE",
                    help="hide the findings recorded in FILE (sse-check lint --write-baseline)")
    parser.addini("sse_check_captures", type="paths", default=[],
                  help="capture directories to collect (relative to the ini file)")
    parser.addini("sse_check_url", default="", help="server URL to probe")
    parser.addini("sse_check_model", default="", help="model the probe asks for")
    parser.addini("sse_check_api", type="args", default=[], help="the dialects probed (default: all three)")
    parser.addini("sse_check_dialect", default="", help="check every capture as this API's stream")
    parser.addini("sse_check_profile", default="", help="default profile (a sidecar or --sse-check-profile wins)")
    parser.addini("sse_check_fail_on", default="", help="lowest severity that fails a test (default: warning)")
    parser.addini("sse_check_select", type="args", default=[], help="only these rules")
    parser.addini("sse_check_ignore", type="args", default=[], help="skip these rules")
    parser.addini("sse_check_baseline", default="", help="baseline file (relative to the ini file)")


@dataclass(slots=True, kw_only=True)
class Settings:
    """The plugin's configuration, resolved once in ``pytest_configure``."""

    roots: list[Path]
    url: str | None
    model: str | None
    scenarios: list[Any] = field(default_factory=list)
    profile: str | None  # forced (command line)
    dialect: str | None = None  # every capture checked as this dialect (None: each its own)
    default_profile: str
    fail_on: Severity
    select: list[str] | None
    ignore: list[str] | None
    gate: BaselineRun
    invocation_dir: Path

    def engine(self, profile: str) -> EngineOptions:
        return EngineOptions(profile=get_profile(profile), select=_codes(self.select), ignore=_codes(self.ignore))

    def capture_engine(self, profile: str) -> EngineOptions:
        """A capture's engine options: the probe's, and the dialect when one is forced."""
        return dataclasses.replace(self.engine(profile), dialect=self.dialect)

    def owns(self, path: Path) -> bool:
        return any(path == root or root in path.parents for root in self.roots)


def _codes(values: list[str] | None) -> tuple[str, ...] | None:
    """--select/--ignore as the engine options hold them (code prefixes; None for none)."""
    return tuple(values) if values else None


SETTINGS = pytest.StashKey["Settings | None"]()
PROBE_RUN = pytest.StashKey["ProbeRun"]()


def pytest_configure(config: pytest.Config) -> None:
    try:
        settings = _settings(config)
    except UsageError as exc:
        raise pytest.UsageError(f"sse-check: {exc}") from None
    config.stash[SETTINGS] = settings
    if settings is None:
        return  # inert: no capture directory, no URL
    for root in settings.roots:
        # Collected like a path on the command line, so `pytest --sse-check-captures DIR` alone works.
        if str(root) not in config.args:
            config.args.append(str(root))


def _settings(config: pytest.Config) -> Settings | None:
    option = config.option
    here = config.invocation_params.dir
    roots = [(here / raw).resolve() for raw in option.sse_check_captures]
    roots += [Path(p).resolve() for p in config.getini("sse_check_captures")]
    url = option.sse_check_url or config.getini("sse_check_url") or None
    if not roots and not url:
        return None
    for root in roots:
        if not root.exists():
            raise UsageError(f"capture directory {root} does not exist")
    model = option.sse_check_model or config.getini("sse_check_model") or None
    if url and not model:
        raise UsageError("--sse-check-url needs --sse-check-model (or the ini option sse_check_model)")
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    default_profile = config.getini("sse_check_profile") or "openai"
    fail_on_text = option.sse_check_fail_on or config.getini("sse_check_fail_on") or "warning"
    baseline_text = option.sse_check_baseline or None
    baseline_path = (here / baseline_text) if baseline_text else (
        ini_dir / config.getini("sse_check_baseline") if config.getini("sse_check_baseline") else None)
    try:
        get_profile(default_profile)
        fail_on = Severity.parse(fail_on_text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from checker.commands.common import selectors

    settings = Settings(
        roots=roots,
        url=url,
        model=model,
        profile=option.sse_check_profile,
        dialect=_dialect(option.sse_check_dialect or config.getini("sse_check_dialect") or None),
        default_profile=default_profile,
        fail_on=fail_on,
        select=selectors(option.sse_check_select or config.getini("sse_check_select")) or None,
        ignore=selectors(option.sse_check_ignore or config.getini("sse_check_ignore")) or None,
        gate=BaselineRun(load_baseline(baseline_path) if baseline_path else None,
                         base=baseline_path.parent if baseline_path else here),
        invocation_dir=here,
    )
    if url:
        from checker.commands.probe import DEFAULT_APIS, parse_apis
        from checker.live.scenarios import load_scenario_files, pick, suite

        apis = parse_apis(option.sse_check_api or config.getini("sse_check_api")) or DEFAULT_APIS
        settings.scenarios = pick(suite(load_scenario_files(option.sse_check_scenario_file), apis),
                                  option.sse_check_scenario)
    return settings


def _dialect(name: str | None) -> str | None:
    """A dialect name from the ini file (the command line's is checked by its choices)."""
    if name is not None:
        try:
            dialects.get(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return name


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    settings = config.stash.get(SETTINGS, None)
    if settings is None:
        return None
    lines = []
    if settings.roots:
        lines.append(f"sse-check: captures {', '.join(map(str, settings.roots))}")
    if settings.url:
        lines.append(f"sse-check: probing {settings.url} (model {settings.model}, "
                     f"{len(settings.scenarios)} scenarios)")
    if settings.dialect:
        lines.append(f"sse-check: every capture checked as {dialects.get(settings.dialect).title}")
    lines.append(f"sse-check: profile {settings.profile or settings.default_profile + ' (or the sidecar)'}, "
                 f"fail on {settings.fail_on}")
    return lines


# --- the verdict of one item ----------------------------------------------------------------------------------


class StreamFailed(Exception):
    """Raised by ``runtest`` when a stream has findings at or above the failing severity."""

    def __init__(self, name: str, result: LintResult, fail_on: Severity) -> None:
        super().__init__(f"{name}: {sum(f.severity >= fail_on for f in result.findings)} finding(s)")
        self.name = name
        self.result = result
        self.fail_on = fail_on


class CheckError(Exception):
    """A capture or scenario that could not be checked at all (unreadable file, bad sidecar): one line."""


def render(name: str, result: LintResult, fail_on: Severity, *, color: bool) -> str:
    """The findings as ``sse-check lint`` prints them (its text reporter)."""
    from checker.report import ReportOptions
    from checker.report.text import TextReporter

    buffer = io.StringIO()
    options = ReportOptions(command="pytest", profile=result.profile, fail_on=fail_on,
                            color="always" if color else "never")
    TextReporter(buffer, options).file(name, result)
    return buffer.getvalue().rstrip("\n")


class _SseItem(pytest.Item):
    def _verdict(self, name: str, result: LintResult) -> None:
        settings = self.config.stash[SETTINGS]
        assert settings is not None
        result = settings.gate.apply(name, result)
        self.user_properties.append(("sse-check", ", ".join(f.code for f in result.findings) or "clean"))
        if any(f.severity >= settings.fail_on for f in result.findings):
            raise StreamFailed(name, result, settings.fail_on)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        error = excinfo.value
        if isinstance(error, StreamFailed):
            color = self.config.get_terminal_writer().hasmarkup
            return render(error.name, error.result, error.fail_on, color=color)
        if isinstance(error, (CheckError, UsageError, OSError)):
            return f"sse-check: {error}"
        return super().repr_failure(excinfo)


# --- captures ---------------------------------------------------------------------------------------------------


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash.get(SETTINGS, None)
    if settings is None or file_path.suffix != ".sse" or not settings.owns(file_path.resolve()):
        return None
    return CaptureFile.from_parent(parent, path=file_path)


def sidecar_profile(capture: Path) -> str | None:
    """The profile a capture's sidecar names: ``X.profile`` (its first line) or ``X.meta.json``'s ``profile``."""
    from checker.captures import load_json_sidecar, sidecar

    stem = capture.name.removesuffix(".sse")
    plain = capture.with_name(stem + PROFILE_SIDECAR)
    if plain.is_file():
        lines = [ln.strip() for ln in plain.read_text(encoding="utf-8").splitlines()]
        name = next((ln for ln in lines if ln and not ln.startswith("#")), None)
        if name is not None:
            return name
    meta = sidecar(capture, "meta")
    if meta.is_file():
        document = load_json_sidecar(meta)
        if isinstance(document, dict) and isinstance(document.get("profile"), str):
            return document["profile"]
    return None


class CaptureFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        settings = self.config.stash[SETTINGS]
        assert settings is not None
        try:
            profile = settings.profile or sidecar_profile(self.path) or settings.default_profile
            get_profile(profile)
        except (UsageError, ValueError, OSError, UnicodeDecodeError) as exc:
            # Still an item, so the bad sidecar is a failing test with one line, not a collection error.
            yield CaptureItem.from_parent(self, name="sse-check", profile=None, problem=str(exc))
            return
        yield CaptureItem.from_parent(self, name=f"sse-check[{profile}]", profile=profile, problem=None)


class CaptureItem(_SseItem):
    def __init__(self, *, profile: str | None, problem: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.profile = profile
        self.problem = problem

    def runtest(self) -> None:
        from checker.captures import read_chunks, request_for
        from checker.lint_job import linter_for

        if self.problem is not None or self.profile is None:
            raise CheckError(self.problem or "no profile")
        settings = self.config.stash[SETTINGS]
        assert settings is not None
        name = settings.gate.key(str(self.path))
        try:
            linter = linter_for(self.path, request_for(self.path), settings.capture_engine(self.profile))
            for chunk in read_chunks(self.path):
                linter.feed(chunk)
        except (OSError, UsageError) as exc:
            raise CheckError(f"{name}: {getattr(exc, 'strerror', None) or exc}") from None
        self._verdict(name, linter.close())

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name} (sse-check lint --profile {self.profile})"


# --- live scenarios -----------------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so those select scenarios too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    settings = config.stash.get(SETTINGS, None)
    if settings is None or not settings.url:
        return
    suite = ProbeSuite.from_parent(session, name="sse-check-probe")
    items.extend(suite.collect())


class ProbeSuite(pytest.Collector):
    def collect(self) -> list[pytest.Item]:  # type: ignore[override]
        settings = self.config.stash[SETTINGS]
        assert settings is not None
        return [ScenarioItem.from_parent(self, name=s.name, scenario=s) for s in settings.scenarios]


@dataclass(slots=True)
class ProbeRun:
    """The suite probed once per session (as ``sse-check probe`` does: pairs and all); items read from it."""

    results: dict[str, Any] | None = None


class ScenarioItem(_SseItem):
    def __init__(self, *, scenario: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario

    def runtest(self) -> None:
        outcome = self._outcome()
        if outcome.result is None:
            pytest.skip(outcome.skipped or "not probed")
        self._verdict(self.scenario.name, outcome.result)

    def _outcome(self) -> Any:
        run = self.config.stash.setdefault(PROBE_RUN, ProbeRun())
        if run.results is None:
            wanted = [i.scenario for i in self.session.items if isinstance(i, ScenarioItem)]
            run.results = {r.scenario.name: r for r in probe_all(self.config.stash[SETTINGS], wanted)}
        return run.results[self.scenario.name]

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "sse-check-probe", None, f"probe scenario {self.scenario.name}"


def probe_all(settings: Settings | None, scenarios: list[Any]) -> list[Any]:
    """Probe the scenarios with the probe's own runner and configuration."""
    from checker.live import probe as prober
    from checker.live import probe_run
    from checker.live.redact import Redactor

    assert settings is not None and settings.url and settings.model
    headers: list[tuple[str, str]] = []
    secrets: list[str] = []
    key = os.environ.get("OPENAI_API_KEY", "")
    if key:  # as `sse-check probe` does by default
        headers.append(("Authorization", f"Bearer {key}"))
        secrets.append(key)
    profile = settings.profile or settings.default_profile
    config = prober.ProbeConfig(
        url=prober.endpoint(settings.url), model=settings.model, headers=tuple(headers),
        redactor=Redactor(secrets), engine=settings.engine(profile),
    )
    return probe_run.run(scenarios, config)
