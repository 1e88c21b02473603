"""Generate a realistic synthetic vault (ADRs, incidents, rules) for benchmarks.

    python bench/vaultgen.py OUT_DIR --notes 10000 [--seed 7] [--git]

Each note has schema-valid frontmatter, 3–6 sections of prose (~1.5 KB body),
about 3 WikiLinks to other notes (some with headings), and a few tags from
the generated ``.vaultsync.yaml`` vocabulary. ``--git`` commits the result.
"""

from __future__ import annotations

import argparse
import random
import subprocess
from pathlib import Path

TYPES = [("adr", "docs/adr", "ADR", "accepted"), ("incident", "docs/incidents", "INC", "resolved"),
         ("rule", "docs/rules", "RULE", "active")]
TAGS = ["database", "search", "ops", "security", "latency", "storage", "ci", "networking", "billing", "auth"]
WORDS = ("cache index shard replica latency budget query rollout canary deploy queue retry backoff timeout "
         "lock contention schema migration vector embedding token chunk commit merge rebase alert pager "
         "runbook owner service gateway quota throttle region failover snapshot backup restore audit policy "
         "review incident outage regression metric dashboard trace sampling cost capacity disk memory cpu").split()
HEADINGS = ["Context", "Decision", "Consequences", "Timeline", "Root cause", "Follow-ups", "Rule", "Rationale",
            "Exceptions", "Alternatives"]
CONFIG = """vault: docs
types:
  adr: {folder: docs/adr}
  incident: {folder: docs/incidents}
  rule: {folder: docs/rules}
vocabulary:
  tags: [%s]
""" % ", ".join(TAGS)


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def generate(out: Path, notes: int, seed: int = 7) -> list[str]:
    """Write ``notes`` notes and the config under ``out``; returns the note paths."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / ".vaultsync.yaml").write_text(CONFIG, encoding="utf-8")
    plan: list[tuple[str, str, str, str, str, list[str]]] = []
    for i in range(notes):
        type_name, folder, prefix, status = TYPES[i % 3]
        mid = f"{prefix}-{i:05d}"
        heads = rng.sample(HEADINGS, rng.randint(3, 6))
        plan.append((type_name, folder, mid, status, f"{folder}/{mid}.md", heads))
    for type_name, _folder, mid, status, path, heads in plan:
        links = []
        for _ in range(3):
            other = plan[rng.randrange(notes)]
            links.append(f"[[{other[2]}#{other[5][0]}]]" if rng.random() < 0.3 else f"[[{other[2]}]]")
        extra = "severity: SEV3\n" if type_name == "incident" else ""
        fm = (f"---\nmemory_id: {mid}\ntype: {type_name}\ntitle: {_sentence(rng)[:60].rstrip('.')}\n"
              f"status: {status}\ncreated: \"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}\"\n"
              f"confidence: {rng.choice([0.6, 0.8, 0.9])}\nimportance: {rng.randint(1, 10)}\n"
              f"tags: [{', '.join(rng.sample(TAGS, 2))}]\n{extra}---\n")
        body = []
        for j, head in enumerate(heads):
            body.append(f"## {head}\n")
            para = " ".join(_sentence(rng) for _ in range(rng.randint(2, 4)))
            if j < len(links):
                para += f" See {links[j]}."
            body.append(para + "\n")
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(fm + "\n".join(body), encoding="utf-8")
    return [p[4] for p in plan]


def git_commit(out: Path, message: str = "generated vault") -> None:
    """``git init`` (if needed), add everything and commit."""
    run = lambda *a: subprocess.run(a, cwd=out, check=True, capture_output=True)  # noqa: E731
    if not (out / ".git").exists():
        run("git", "init", "-q", "-b", "main")
        run("git", "config", "user.email", "bench@example.com")
        run("git", "config", "user.name", "bench")
    run("git", "add", "-A")
    run("git", "commit", "-qm", message, "--no-verify")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--git", action="store_true")
    a = ap.parse_args()
    generate(a.out, a.notes, a.seed)
    if a.git:
        git_commit(a.out)
