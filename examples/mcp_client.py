"""Try the MCP server without an agent: start `vaultsync mcp` over stdio, list its tools, run one search.

Run from inside a repository that vaultsync indexes (`pip install '.[search,mcp]'` first):

    python examples/mcp_client.py "how do we retry webhooks?"

It prints the tools the server offers, then each hit's relevance and chunk (or why there is none), and
says when the answer is weak.
"""

from __future__ import annotations

import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(query: str) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "vaultsync", "mcp"])
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
            print("no hits:", found.get("best_rejected") or "the vault holds nothing above the relevance floor")


if __name__ == "__main__":
    anyio.run(main, " ".join(sys.argv[1:]) or "how do we retry webhooks?")
