#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for end-to-end tests of loopguard with
the real Claude Code CLI. Loopback only; stdlib only.

Usage: mock_anthropic.py SCRIPT.json REQUEST_LOG.jsonl PORT_FILE

SCRIPT.json is a list of steps; each is {"tool": NAME, "input": {...}} or {"text": "..."}.
Every request that offers tools is a turn of the main agent loop: turn k (the number of
assistant messages already in the conversation) answers with step k, and with a final text once
the steps run out. Requests without tools (titles, summaries) get a short text. Every request
body is appended to REQUEST_LOG.jsonl. The chosen port is written to PORT_FILE.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
PORT_FILE = sys.argv[3]
LOCK = threading.Lock()


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream(model, block, stop_reason, msg_id):
    out = [
        sse("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    ]
    if block["type"] == "tool_use":
        out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                   "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                   "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
    else:
        out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}))
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": block["text"]}}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(sse("message_delta", {"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 20}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.do_HEAD()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with LOCK:
            with open(LOG, "a") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        model = body.get("model", "claude-mock")
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            data = json.dumps({"input_tokens": 100}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if body.get("tools") and turn < len(SCRIPT) and "tool" in SCRIPT[turn]:
            step = SCRIPT[turn]
            block = {"type": "tool_use", "id": f"toolu_e2e_{turn}", "name": step["tool"], "input": step["input"]}
            payload = stream(model, block, "tool_use", f"msg_e2e_{turn}")
        else:
            text = SCRIPT[turn]["text"] if body.get("tools") and turn < len(SCRIPT) else "done"
            payload = stream(model, {"type": "text", "text": text}, "end_turn", f"msg_e2e_t{turn}")
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        else:
            msg = {"id": "msg_plain", "type": "message", "role": "assistant", "model": model,
                   "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                   "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
            data = json.dumps(msg).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
