"""One module per ``tcplens`` subcommand, each with ``register(subcommands)``; see ``tcplens.cli``."""
