#!/usr/bin/env python3
"""Interoperability check of Parley's MCP server with a client that is not ours: the official
Python SDK (`pip install mcp`). Connects over Streamable HTTP (or, for a URL on `/sse/mcp`, the
HTTP+SSE transport of protocol 2024-11-05), lists the tools, checks their names
against the SDK's own SEP-986 rule, lists the knowledge bases, searches the first one, and makes a
call with bad arguments (which must come back as a tool error, not a protocol error).

Usage: mcp_client.py URL [QUERY]
  URL    the MCP endpoint with its token, e.g. http://127.0.0.1:3000/mcp?token=pm_...
         or http://127.0.0.1:3000/sse/mcp?token=pm_...
  QUERY  what to search for (default: "QMAS")

Prints progress, then one JSON line with the findings; exits 1 on any failure.
"""

import asyncio
import json
import re
import sys

from urllib.parse import urlparse

from mcp import ClientSession
from mcp.client.sse import sse_client

try:  # the SDK renamed the transport in its 2.x line
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:  # pragma: no cover - older SDKs
    from mcp.client.streamable_http import streamablehttp_client as connect

SEP_986 = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def run(url: str, query: str) -> dict:
    transport = sse_client if urlparse(url).path.endswith("/sse/mcp") else connect
    async with transport(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print(f"initialized: {init.server_info.name} {init.server_info.version}", file=sys.stderr)
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            print(f"tools: {names}", file=sys.stderr)
            bad_names = [n for n in names if not SEP_986.match(n)]
            if bad_names:
                raise AssertionError(f"tool names break SEP-986: {bad_names}")

            listed = await session.call_tool("ListAvailableKnowledgeBases", {})
            if listed.is_error:
                raise AssertionError(f"ListAvailableKnowledgeBases failed: {text_of(listed)}")
            bases = json.loads(text_of(listed))["knowledge_bases"]
            if not bases:
                raise AssertionError("no knowledge bases")
            found = await session.call_tool(
                "SearchKnowledgeBase", {"knowledge_base_id": bases[0]["id"], "query": query}
            )
            if found.is_error:
                raise AssertionError(f"SearchKnowledgeBase failed: {text_of(found)}")
            results = json.loads(text_of(found))["results"]
            print(f"search results: {[r['title'] for r in results]}", file=sys.stderr)

            bad = await session.call_tool("SearchKnowledgeBase", {"query": query})
            print(f"bad call: is_error={bad.is_error} {text_of(bad)}", file=sys.stderr)
            return {
                "server": init.server_info.name,
                "tools": names,
                "knowledge_bases": len(bases),
                "search_top_title": results[0]["title"] if results else None,
                "bad_call_is_error": bool(bad.is_error),
            }


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    url = sys.argv[1]
    query = sys.argv[2] if len(sys.argv) > 2 else "QMAS"
    try:
        report = asyncio.run(run(url, query))
    except Exception as e:  # noqa: BLE001 - any failure fails the check
        print(f"MCP client check FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
