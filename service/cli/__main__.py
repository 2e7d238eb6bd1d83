"""``python -m service.cli``: the ``stroidok`` command."""

from service.cli.commands import main

main()
