"""Try the MCP server without an agent: start `vaultsync mcp` over stdio, list its tools, run one search.

Run from inside a repository that vaultsync indexes (`pip install '.[search,mcp]'` first):

    python examples/mcp_client.py "how do we retry webhooks?"

It prints the tools the server offers, then each hit's relevance and chunk (or why there is none), says
when the answer is weak, and names the notes the filters hid with the arguments that show them.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(query: str) -> None:
    # a client passes the server only HOME and PATH unless told: pass this shell's (VAULTSYNC_CACHE_DIR…)
    server = StdioServerParameters(command=sys.executable, args=["-m", "vaultsync", "mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print("tools:", ", ".join(tool.name for tool in (await session.list_tools()).tools))
        result = await session.call_tool("search", {"query": query, "top_k": 3})
        if result.is_error:
            print("refused:", result.content[0].text)
            return
        found = result.structured_content or {}
        for hit in found.get("hits", []):
            print(f"{hit['relevance']:.3f}  {hit.get('chunk_id') or hit['path']}  ({hit.get('memory_id') or '-'})")
        if found.get("weak"):
            print("weak answer: the best relevance is low, these hits may not answer the question")
        if not found.get("hits"):
            best = found.get("best_rejected")
            print("no hits" + (f" (best rejected: {best['path']} at {best['relevance']})" if best else ""))
        for note in (found.get("hidden") or {}).get("notes", []):  # what the filters left out
            args = ", ".join(f"{key}={json.dumps(value)}" for key, value in note["show_with"].items())
            print(f"hidden: {note['memory_id'] or note['path']}: {note['reason']} — search again with {args}")


if __name__ == "__main__":
    anyio.run(main, " ".join(sys.argv[1:]) or "how do we retry webhooks?")
