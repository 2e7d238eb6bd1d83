"""The JSON the engine resources are built from (a package, so the files ship inside the wheel)."""
