"""History replay: what a request sends back of the model's reasoning.

``dialects`` builds request messages from a history (pure functions, the
reference); ``diff`` compares expected and actual messages (pure);
``cases`` loads case files and runs them against a target (the reference, a
Python function, a program); ``formats`` reports them; ``live``, ``live_measure``,
``live_run`` and ``live_report`` are the live replay. The command is
``checker.commands.replay``.
"""
