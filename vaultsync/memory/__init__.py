"""Writing memories: memory_id allocation, scaffolds, validated atomic writes, supersession,
promotion of scratch notes, the revalidation queue, and the read view of one note.

Used by the CLI (``vaultsync new|show|supersede|promote|review``) and the MCP server alike;
nothing here imports :mod:`vaultsync.cli`.
"""
