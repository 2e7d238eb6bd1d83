"""The reference pages generated from the code itself (docs/cli.md, docs/settings.md), kept in step by tests."""
