"""The ``stroidok`` command (``commands``): subcommands that parse flags and delegate."""
