"""The documented GitHub Actions workflow, run here as far as it can be: its vaultsync step."""

from __future__ import annotations

import shlex

import yaml
from conftest import REPO_ROOT, adr, run_cli

WORKFLOW = REPO_ROOT / "examples" / "github-workflow.yml"


def _vaultsync_steps() -> list[list[str]]:
    doc = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = doc["jobs"]["check"]["steps"]
    return [shlex.split(s["run"]) for s in steps if s.get("run", "").startswith("vaultsync ")]


def test_workflow_is_in_the_readme():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    body = WORKFLOW.read_text(encoding="utf-8").split("\n", 2)[2]  # skip the two comment lines
    assert body.strip() in readme


def test_workflow_step_annotates_a_bad_pull_request(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("base")
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="importance: 11\n", body="See [[ADR-0009]].\n"))
    vault.commit("pr")
    (step,) = _vaultsync_steps()
    res = run_cli(step[1:], vault.root)
    assert res.code == 1
    assert res.out.splitlines() == [
        "::error file=docs/adrs/ADR-0002.md,line=7,col=13,title=SC001::importance: 11 must be at most 10",
        "::error file=docs/adrs/ADR-0002.md,line=9,col=5,title=WL001::[[ADR-0009]] → no such note",
    ]


def test_workflow_step_passes_a_clean_pull_request(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("base")
    (step,) = _vaultsync_steps()
    res = run_cli(step[1:], vault.root)
    assert res.code == 0 and res.out == ""


def test_every_json_block_of_the_readme_parses():
    """A reader pastes them into an MCP client's settings: a stray brace there fails far from here."""
    import json
    import re

    blocks = re.findall(r"```json\n(.*?)```", (REPO_ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        json.loads(block)
