"""Reporters: one class per output format, registered by name."""

from __future__ import annotations

import io

from vaultsync.checks import report as report_mod
from vaultsync.diagnostics import WARNING, Diagnostic

DIAGS = [Diagnostic("docs/a, b.md", 3, 4, "SC001", "title: expected string\nsecond line"),
         Diagnostic("docs/c.md", 0, 0, "WL005", "empty link", severity=WARNING)]


def _out(fmt: str) -> str:
    buf = io.StringIO()
    report_mod.report(DIAGS, fmt, buf, checked=7)
    return buf.getvalue()


def test_every_format_has_a_registered_reporter() -> None:
    assert report_mod.FORMATS == ("text", "github", "json")
    assert _out("text").splitlines() == ["docs/a, b.md:3:4: SC001 title: expected string\\nsecond line",  # one line
                                         "docs/c.md:1:1: WL005 warning: empty link",
                                         "7 notes checked: 1 error, 1 warning"]
    assert _out("github").splitlines() == [
        "::error file=docs/a%2C b.md,line=3,col=4,title=SC001::title: expected string%0Asecond line",
        "::warning file=docs/c.md,line=1,col=1,title=WL005::empty link"]
    assert '"errors": 1' in _out("json") and '"checked": 7' in _out("json")


def test_a_new_reporter_registers_under_its_name() -> None:
    class CountReporter(report_mod.Reporter):
        name = "count-test"

        def report(self, diagnostics, checked):  # type: ignore[no-untyped-def]
            self.out.write(f"{len(diagnostics)}/{checked}\n")

    try:
        assert _out("count-test") == "2/7\n"
    finally:
        del report_mod.REPORTERS["count-test"]
