"""Wire dialects: one package per streamed API (its vocabulary, machine, rules, schemas and client effects)."""
