"""The engine resources of an index alias: templates, applying them, maintenance."""
