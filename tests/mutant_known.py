"""The disagreements between sse-check's predictions and the real clients on the mutant corpus that are known
and not fixed yet, one reason per class (tests/test_mutant_labels.py).

A class is (dialect, client, predicted verdict, observed verdict, what decided the prediction: the finding's
code, or "no finding"). Every disagreement of the corpus must fall in a listed class, and every listed class
must still occur: fixing a class means removing its line.
"""

from __future__ import annotations

from typing import Any

# The count after each class: its disagreements when it was listed (`python tests/mutant_labels.py known` prints
# the table as it stands).
KNOWN: dict[tuple[str, str, str, str, str], str] = {
    ('chat', 'openai-node', 'breaks', 'degraded', 'CHT002'):  # 2
        "CHT002 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-node', 'breaks', 'degraded', 'CHT012'):  # 12
        "CHT012 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-node', 'breaks', 'ok', 'CHT012'):  # 1
        "CHT012 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-node', 'degraded', 'ok', 'CHT001'):  # 19
        "CHT001's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('chat', 'openai-python', 'breaks', 'degraded', 'CHT005'):  # 1
        "CHT005 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-python', 'breaks', 'degraded', 'CHT011'):  # 3
        "CHT011 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-python', 'breaks', 'degraded', 'SSE001'):  # 13
        "SSE001 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('chat', 'openai-python', 'degraded', 'breaks', 'CHT001'):  # 1
        "the client raises where CHT001's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('chat', 'openai-python', 'degraded', 'breaks', 'CHT005'):  # 1
        "the client raises where CHT005's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('chat', 'openai-python', 'degraded', 'breaks', 'CHT015'):  # 1
        "the client raises where CHT015's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('chat', 'openai-python', 'ok', 'breaks', 'no finding'):  # 17
        'the client raises on a value no finding blames on it: the schema finding on the field names no client, so the effects table does not say which fields this client dereferences',
    ('chat', 'openai-python', 'ok', 'degraded', 'no finding'):  # 35
        "the client returns a value the stream carried in the wrong type or place, which sse-check's view of the stream leaves out, and no finding gives this client an effect",
    ('messages', 'anthropic-python', 'breaks', 'degraded', 'ANT007'):  # 19
        "ANT007 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-python', 'breaks', 'ok', 'ANT007'):  # 2
        "ANT007 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-python', 'breaks', 'ok', 'SCH001'):  # 4
        "SCH001 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-python', 'degraded', 'breaks', 'ANT010'):  # 7
        "the client raises where ANT010's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('messages', 'anthropic-python', 'degraded', 'ok', 'ANT007'):  # 1
        "ANT007's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('messages', 'anthropic-python', 'degraded', 'ok', 'ANT017'):  # 2
        "ANT017's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('messages', 'anthropic-python', 'ok', 'breaks', 'no finding'):  # 21
        'the client raises on a value no finding blames on it: the schema finding on the field names no client, so the effects table does not say which fields this client dereferences',
    ('messages', 'anthropic-python', 'ok', 'degraded', 'no finding'):  # 6
        "the client returns a value the stream carried in the wrong type or place, which sse-check's view of the stream leaves out, and no finding gives this client an effect",
    ('messages', 'anthropic-ts', 'breaks', 'degraded', 'ANT010'):  # 2
        "ANT010 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-ts', 'breaks', 'degraded', 'SCH001'):  # 5
        "SCH001 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-ts', 'breaks', 'ok', 'ANT010'):  # 2
        "ANT010 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('messages', 'anthropic-ts', 'degraded', 'ok', 'ANT007'):  # 3
        "ANT007's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('messages', 'anthropic-ts', 'degraded', 'ok', 'ANT017'):  # 2
        "ANT017's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('messages', 'anthropic-ts', 'ok', 'breaks', 'no finding'):  # 5
        'the client raises on a value no finding blames on it: the schema finding on the field names no client, so the effects table does not say which fields this client dereferences',
    ('messages', 'anthropic-ts', 'ok', 'degraded', 'no finding'):  # 13
        "the client returns a value the stream carried in the wrong type or place, which sse-check's view of the stream leaves out, and no finding gives this client an effect",
    ('responses', 'openai-node', 'degraded', 'breaks', 'LIF006'):  # 3
        "the client raises where LIF006's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-node', 'degraded', 'breaks', 'LIF008'):  # 5
        "the client raises where LIF008's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-node', 'degraded', 'breaks', 'REC003'):  # 4
        "the client raises where REC003's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-node', 'degraded', 'breaks', 'REC004'):  # 21
        "the client raises where REC004's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-node', 'degraded', 'breaks', 'REC005'):  # 2
        "the client raises where REC005's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-node', 'degraded', 'ok', 'REC003'):  # 18
        "REC003's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('responses', 'openai-node', 'degraded', 'ok', 'REC004'):  # 31
        "REC004's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('responses', 'openai-node', 'degraded', 'ok', 'SSE010'):  # 9
        "SSE010's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('responses', 'openai-node', 'ok', 'breaks', 'no finding'):  # 90
        'the client raises on a value no finding blames on it: the schema finding on the field names no client, so the effects table does not say which fields this client dereferences',
    ('responses', 'openai-node', 'ok', 'degraded', 'no finding'):  # 17
        "the client returns a value the stream carried in the wrong type or place, which sse-check's view of the stream leaves out, and no finding gives this client an effect",
    ('responses', 'openai-python', 'breaks', 'degraded', 'ITM005'):  # 2
        "ITM005 is predicted to break this client, which finishes with another result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'breaks', 'ok', 'CNT002'):  # 4
        "CNT002 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'breaks', 'ok', 'CNT004'):  # 1
        "CNT004 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'breaks', 'ok', 'ITM001'):  # 2
        "ITM001 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'breaks', 'ok', 'ITM003'):  # 2
        "ITM003 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'breaks', 'ok', 'ITM005'):  # 1
        "ITM005 is predicted to break this client, which returns the stream's result: the effect's condition is wider than what the client checks",
    ('responses', 'openai-python', 'degraded', 'breaks', 'LIF008'):  # 6
        "the client raises where LIF008's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-python', 'degraded', 'breaks', 'REC003'):  # 7
        "the client raises where REC003's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-python', 'degraded', 'breaks', 'REC004'):  # 5
        "the client raises where REC004's effect says it only degrades: the condition under which it raises (the field's type or value) is not in the effects table",
    ('responses', 'openai-python', 'degraded', 'ok', 'REC003'):  # 35
        "REC003's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('responses', 'openai-python', 'degraded', 'ok', 'REC004'):  # 37
        "REC004's effect on this client is predicted whatever the stream carried: its condition does not tell apart the streams where the final result is unchanged",
    ('responses', 'openai-python', 'ok', 'breaks', 'no finding'):  # 39
        'the client raises on a value no finding blames on it: the schema finding on the field names no client, so the effects table does not say which fields this client dereferences',
    ('responses', 'openai-python', 'ok', 'degraded', 'no finding'):  # 20
        "the client returns a value the stream carried in the wrong type or place, which sse-check's view of the stream leaves out, and no finding gives this client an effect",
}


def disagreement_class(dialect: str, client: str, compared: Any) -> tuple[str, str, str, str, str]:
    return (dialect, client, compared.predicted, compared.observed, compared.decided_by)
