"""Graph hop: notes linked to (or from) the best hits join the candidates, with a decayed score.

One recursive CTE over ``links`` walks up to ``hops`` edges in both directions
(a note's outgoing links and its backlinks). A neighbour reached at depth d from
a seed with fused score s gets ``s × decay**d``; it never displaces its seed.
"""

from __future__ import annotations

import json
import sqlite3

_HOP_SQL = """
WITH RECURSIVE hop(path, depth, seed) AS (
    SELECT value, 0, value FROM json_each(?)
    UNION
    SELECT CASE WHEN l.source = hop.path THEN l.resolved ELSE l.source END, hop.depth + 1, hop.seed
    FROM hop JOIN links l ON (l.source = hop.path OR l.resolved = hop.path)
    WHERE hop.depth < ? AND l.resolved IS NOT NULL AND l.resolved != l.source
)
SELECT path, seed, min(depth) FROM hop WHERE depth > 0 GROUP BY path, seed
"""


def neighbours(db: sqlite3.Connection, seeds: dict[str, float], hops: int = 1,
               decay: float = 0.5) -> dict[str, tuple[float, str, int]]:
    """Notes within ``hops`` links of ``seeds``.

    Args:
        seeds: note path → seed score.
        hops: maximum link distance (1–2 is useful).
        decay: score multiplier per hop.
    Returns:
        neighbour path → (score, seed path it came from, depth); seeds themselves excluded.
    """
    if not seeds or hops <= 0:
        return {}
    found: dict[str, tuple[float, str, int]] = {}
    for path, seed, depth in db.execute(_HOP_SQL, (json.dumps(list(seeds)), hops)):
        if path in seeds or path is None:
            continue
        score = seeds[seed] * decay ** depth
        if path not in found or score > found[path][0]:
            found[path] = (score, seed, depth)
    return found
