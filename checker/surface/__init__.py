"""The whole surface a client relies on, beyond one streamed POST: flows, capabilities, readiness per client.

Layer: above checker.live (it sends each request with the probe's own machinery), below checker.commands.

* :mod:`~checker.surface.flow`: a *flow* is a named sequence of steps (``POST``/``GET``/``DELETE``, a path,
  a body, what is expected: stream / nonstream / error / json) whose later steps refer to earlier answers
  (``{create.id}``, ``{call.output[type=function_call].call_id}``).
* :mod:`~checker.surface.run`: runs flows after the scenario suite; each step goes through
  :func:`checker.live.probe.probe_scenario`, so a streamed step gets every stream check and is saved by
  ``--save`` like a scenario; a flow's :class:`~checker.surface.record.FlowRecord` (its requests and answers)
  goes to its feature's judge.
* :mod:`~checker.surface.capability`: features and the capability table (supported / unsupported / broken);
  :mod:`~checker.surface.readiness`: one verdict per client (ready / degraded / broken, because …).
* :mod:`~checker.surface.probing`: the glue ``sse-check probe`` calls; :mod:`~checker.surface.files`: flows
  in ``--scenario-file`` documents.

How a new feature plugs in (``stored``, ``websocket``, …)
--------------------------------------------------------
1. Declare its rules in ``checker/rules/<family>.py`` (a new family prefix in the registry's FAMILIES); their
   examples are flow records, ``captures/surface/<CODE>-<name>.flow.json`` with the codes they give in
   ``expect`` (tests/surface/test_flow_records.py judges every one).
2. Write ``checker/surface/<feature>.py`` with:
   * ``flows(apis) -> list[Flow]``: its flows for the dialects probed. Mark the first step that would show
     the server lacks the feature ``gate=True``: its 404/405/501 (or an error saying "not supported") makes
     the row "unsupported", never a failure. A body may be a template or a function of the earlier answers
     (``Answers -> body``; raise :class:`~checker.surface.flow.UnresolvedReference` when one lacks what it
     needs). ``Step(method="GET", path="/responses/{create.id}", expect="json")`` fetches; a step with
     ``api`` and no path POSTs to that dialect's endpoint.
   * ``judge(record) -> [(step name, Finding)]``: its rules on the whole record (pure; ``record.step(name)``
     has each step's ``request``, ``status`` and ``answer``; ``record.facts`` what the scenarios showed).
   * ``register(Feature(name=..., title=..., families=("XYZ",), judge=judge))`` at import.
3. Add the module's name to :data:`checker.surface.features.MODULES`, and the clients that rely on it to
   :data:`checker.surface.readiness.RELIES_ON` (required or optional, with the client code as source).
"""
