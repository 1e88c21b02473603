"""Validation of a vault: every check over the notes, their diagnostics and the formats that report them."""
