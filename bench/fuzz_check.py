"""Fuzz `vaultsync check` with generated, mutated notes: no traceback, no hang, no silent value change.

    python bench/fuzz_check.py [--notes 10000] [--batch 250] [--seed 12]

Each note mixes frontmatter lines a person might write (colons, ``#``, quotes,
brackets, numbers with leading or trailing zeros, base 60, exponents, WikiLinks,
tabs, several scripts in NFC and NFD) with random mutations (characters dropped,
doubled or inserted, lines swapped, the file cut short), a body of links, code
and escapes, odd file names and odd encodings (BOM, CRLF, Latin-1, NUL bytes).
Batches are written to a temporary vault and checked by the real command
(in-process ``vaultsync check``); every note is also parsed alone. Reported:

* tracebacks: any exception escaping the command or the parser;
* hangs: the slowest single-note parse and the slowest batch (each must stay under 5 s);
* silent value changes: a frontmatter line written as ``key: text`` whose stored
  value is not that text, while the check printed nothing for that line.

Exit status 1 when any of the three is found.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import signal
import sys
import tempfile
import time
import traceback
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vaultsync.cli.main import main  # noqa: E402
from vaultsync.vault.note import parse_note  # noqa: E402
from vaultsync.vault.scalars import canonical_number  # noqa: E402

HANG_S = 5.0
WORDS = ["deploy", "INC", "db lock", "Décision", "Straße", "Москва", "障害", "한국어", "Ελλάδα", "café", "v1",
         "C#", "R&D", "x"]
VALUE_PIECES = [" #42", " # note", "#tag", ": ", ":", "'", '"', "[", "]", "{", "}", "[[Note]]", "[[Café|c]]",
                "1.10", "0.80", "007", "1:30", "1e3", "1_000", "0x1F", "+5", ".5", "true", "NO", "~", "null",
                "@me", "`ls`", "%50", "&a", "*a", "!x", "|", ">", "- ", "? ", "\t", "\\t", "C:\\temp", "2024-03-01",
                "%20", "---", "\u2028", "\x07", "\x1b", "\x7f", "\x85", "\ufffe", "\U0001f600"]
KEYS = ["title", "summary", "version", "owner", "ticket", "duration", "ratio", "status", "tags", "up", "Заголовок",
        "タイトル"]
LINK_TARGETS = ["Note", "Café", "cafe\u0301", "CAFÉ", "Straße", "STRASSE", "My%20Note", "ADR-0004", "folder/Note",
                "missing", "Note#Heading", "Note#^block", "Note|alias", "", "#Heading", "Москва", "МОСКВА"]
BODY_PIECES = ["text ", "`code [[x]]`", "\\[[esc]]", "\\![[e]]", "\n```\n[[in fence]]\n```\n", "\n    [[indented]]\n",
               "\n## Heading [[Note]] **b**\n", "^block", "\n# Heading\n", "[[", "]]", "\n> [[quoted]]\n", "\n- [[item]]\n"]
FILE_NAMES = ["Note", "Café", "cafe\u0301", "Straße", "Москва", "ADR-0004-clickhouse", "My Note", "folder/Note",
              "한국어/노트", "a%20b"]


@dataclass
class Stats:
    """What the run found."""

    notes: int = 0
    tracebacks: list[str] = field(default_factory=list)
    silent: list[str] = field(default_factory=list)
    slowest_note_s: float = 0.0
    slowest_batch_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.tracebacks and not self.silent and max(self.slowest_note_s, self.slowest_batch_s) < HANG_S


def _value(rng: random.Random) -> str:
    parts = [rng.choice(WORDS if rng.random() < 0.5 else VALUE_PIECES) for _ in range(rng.randint(1, 4))]
    text = "".join(p if i == 0 or p.startswith((" ", ":")) else " " + p for i, p in enumerate(parts)).strip()
    return unicodedata.normalize("NFD", text) if rng.random() < 0.1 else text


def _mutate(text: str, rng: random.Random) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    op = rng.randrange(4)
    if op == 0:
        return text[:i] + text[i + 1:]
    if op == 1:
        return text[:i] + text[i] + text[i:]
    if op == 2:
        return text[:i] + rng.choice("#:'\"[]{}\t\n -|>&*!%@`\\") + text[i:]
    return text[:i]


def generate(rng: random.Random) -> tuple[str, bytes, dict[int, str]]:
    """(file name, bytes, {file line: intended text of a plain ``key: text`` line})."""
    lines = ["---"]
    intended: dict[int, str] = {}
    for key in rng.sample(KEYS, rng.randint(1, 6)):
        value = _value(rng)
        if rng.random() < 0.15:
            lines.append(f"{key}:")
            lines.extend(f"  - {_value(rng)}" for _ in range(rng.randint(1, 3)))
            continue
        line = f"{key}: {value}"
        if rng.random() < 0.2:
            line = _mutate(line, rng)
        elif value and value == value.strip() and "\n" not in value and value[0] not in "'\"[{!":
            # quoted values and flow collections mean what YAML says they mean
            intended[len(lines) + 1] = value
        lines.extend(line.split("\n"))  # a mutation may have broken the line: later line numbers follow
    if rng.random() < 0.1:
        lines.insert(rng.randrange(1, len(lines) + 1), rng.choice(["\ttabbed: x", "  indented: y", "---", "dup: 1"]))
        intended = {}  # line numbers moved
    if rng.random() > 0.05:
        lines.append("---")
    body = "".join(rng.choice(BODY_PIECES) if rng.random() < 0.5 else f"[[{rng.choice(LINK_TARGETS)}]] "
                   for _ in range(rng.randint(0, 12)))
    text = "\n".join(lines) + "\n" + body + "\n"
    name = rng.choice(FILE_NAMES) + f"-{rng.randrange(10**12)}"
    if rng.random() < 0.1:
        name = unicodedata.normalize("NFD", name)
    data = text.encode("utf-8")
    roll = rng.random()
    if roll < 0.03:
        data = text.encode("latin-1", errors="replace")
        intended = {}  # the generator itself lost characters
    elif roll < 0.06:
        data = b"\xef\xbb\xbf" + data
    elif roll < 0.10:
        data = data.replace(b"\n", b"\r\n")
    elif roll < 0.11:
        data = data[:20] + b"\0" + data[20:]
    if data.startswith(b"\xef\xbb\xbf") or b"\r\n" in data:
        pass  # BOM and CRLF keep line numbers
    elif not data.startswith(b"---"):
        intended = {}
    return name + ".md", data, intended


def faithful(text: str, value: object) -> bool:
    """Whether a stored value is what the plain text says (a YAML 1.2 null/bool/number spelt canonically counts)."""
    text = re.split(r"(?:^|\s)#\s", text)[0].strip()  # '# like this' is a comment by the documented rule
    if value is None:
        return text in ("", "~", "null", "Null", "NULL")
    if isinstance(value, bool):
        return text in ("true", "True", "TRUE", "false", "False", "FALSE")
    if isinstance(value, (int, float)):
        return canonical_number(value) == text
    return isinstance(value, str) and value == text


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float):  # type: ignore[no-untyped-def]
    def fire(signum, frame):  # type: ignore[no-untyped-def]
        raise _Hang()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_LOCATED = re.compile(r"^(.+?):(\d+):\d+: [A-Z]{2}\d{3}")


def run(notes: int, batch: int, seed: int, hang_s: float = HANG_S * 4) -> Stats:
    """Generate ``notes`` notes in batches of ``batch`` and check them; see the module doc."""
    rng = random.Random(seed)
    stats = Stats()
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, notes, batch):
            root = Path(tmp) / f"b{start}"
            (root / "docs").mkdir(parents=True)
            (root / ".vaultsync.yaml").write_text("vault: docs\n", encoding="utf-8")
            written: dict[str, tuple[bytes, dict[int, str]]] = {}
            for _ in range(min(batch, notes - start)):
                name, data, intended = generate(rng)
                path = root / "docs" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                written["docs/" + name] = (data, intended)
            for rel, (data, _) in written.items():
                began = time.perf_counter()
                try:
                    with _deadline(hang_s):
                        parse_note(rel, data)
                except _Hang:
                    stats.tracebacks.append(f"{rel}: parse did not finish in {hang_s} s")
                except Exception:  # noqa: BLE001 - that is what is counted
                    stats.tracebacks.append(f"{rel}: {traceback.format_exc()}")
                stats.slowest_note_s = max(stats.slowest_note_s, time.perf_counter() - began)
            out, err = io.StringIO(), io.StringIO()
            began = time.perf_counter()
            try:
                with _deadline(hang_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    code = main(["check", "--root", str(root)])
                if code not in (0, 1) or "Traceback" in err.getvalue():
                    stats.tracebacks.append(f"batch {start}: exit {code}: {err.getvalue()[-2000:]}")
            except _Hang:
                stats.tracebacks.append(f"batch {start}: check did not finish in {hang_s} s")
            except BaseException:  # noqa: BLE001 - SystemExit included: a crash of the command
                stats.tracebacks.append(f"batch {start}: {traceback.format_exc()}")
            stats.slowest_batch_s = max(stats.slowest_batch_s, time.perf_counter() - began)
            located = {(m.group(1), int(m.group(2))) for line in out.getvalue().splitlines()
                       for m in [_LOCATED.match(line)] if m}
            for rel, (data, intended) in written.items():
                note = parse_note(rel, data)
                if note.fm_state != "mapping":
                    continue
                for file_line, text in intended.items():
                    key = note.text.split("\n")[file_line - 1].split(":", 1)[0]
                    if key not in note.frontmatter:
                        continue
                    value = note.frontmatter[key]
                    if text[0] in "&*" and "*" + text[1:].split(" ")[0] in note.text:
                        continue  # an anchor and its alias: YAML syntax, used as such
                    if not faithful(text, value) and (rel, file_line) not in located:
                        stats.silent.append(f"{rel}:{file_line}: wrote {text!r}, stored {value!r}")
            stats.notes += len(written)
    return stats


def main_cli() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    began = time.perf_counter()
    stats = run(args.notes, args.batch, args.seed)
    print(f"{stats.notes} notes in {time.perf_counter() - began:.1f} s: {len(stats.tracebacks)} traceback(s), "
          f"{len(stats.silent)} silent value change(s), slowest note {stats.slowest_note_s * 1000:.0f} ms, "
          f"slowest batch of {args.batch} {stats.slowest_batch_s:.2f} s")
    for line in (stats.tracebacks + stats.silent)[:20]:
        print(line)
    return 0 if stats.ok else 1


if __name__ == "__main__":
    sys.exit(main_cli())
