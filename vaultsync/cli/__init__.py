"""The ``vaultsync`` command line: one module per sub-command."""
