#!/usr/bin/env python3
"""A minimal MCP server over stdio (JSON-RPC 2.0, one message per line) with one tool,
`read_config`, whose result holds a credential. For the end-to-end redaction test only.
The credential is passed in argv so no literal key sits in the repository."""
import json
import sys

SECRET = sys.argv[1]


def reply(id_, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        continue  # notifications
    if method == "initialize":
        reply(id_, {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2024-11-05"),
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "vault", "version": "1.0"}})
    elif method == "tools/list":
        reply(id_, {"tools": [{"name": "read_config", "description": "Read the deploy config",
                               "inputSchema": {"type": "object", "properties": {}}}]})
    elif method == "tools/call":
        reply(id_, {"content": [{"type": "text", "text": "deploy config\ntoken: " + SECRET + "\n"}]})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no such method"}}) + "\n")
        sys.stdout.flush()
