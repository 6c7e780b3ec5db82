#!/usr/bin/env python3
"""A scripted stand-in for three model APIs, for end-to-end tests of loopguard with the real
Codex CLI (OpenAI Responses API), Gemini CLI (Gemini API) and Copilot CLI (OpenAI Chat
Completions). Loopback only; stdlib only.

Usage: mock_models.py SCRIPT.json REQUEST_LOG.jsonl PORT_FILE

SCRIPT.json is a list of steps; each is {"tool": NAME, "input": {...}} or {"text": "..."}, with
the tool named as that API's model would name it (`exec_command` {cmd}, `run_shell_command`
{command}, `bash` {command, description}). Turn k (the number of tool results already in the
conversation) answers with step k, and with a final text once the steps run out. Every request is
appended to REQUEST_LOG.jsonl as {"path", "body"}. The chosen port is written to PORT_FILE.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
PORT_FILE = sys.argv[3]
LOCK = threading.Lock()


def step(turn):
    if turn < len(SCRIPT):
        return SCRIPT[turn]
    return {"text": "done"}


def responses_turn(body):
    return sum(1 for i in body.get("input", []) if isinstance(i, dict)
               and i.get("type") in ("function_call_output", "custom_tool_call_output"))


def gemini_turn(body):
    return sum(1 for c in body.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p)


def chat_turn(body):
    return sum(1 for m in body.get("messages", []) if m.get("role") == "tool")


def responses_answer(turn):
    s = step(turn)
    ev = lambda o: f"event: {o['type']}\ndata: {json.dumps(o)}\n\n"
    if "tool" in s:
        item = {"type": "function_call", "id": f"fc_{turn}", "call_id": f"call_e2e_{turn}",
                "name": s["tool"], "arguments": json.dumps(s["input"])}
    else:
        item = {"type": "message", "role": "assistant", "id": f"msg_{turn}", "status": "completed",
                "content": [{"type": "output_text", "text": s["text"], "annotations": []}]}
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
    return (ev({"type": "response.output_item.done", "output_index": 0, "item": item})
            + ev({"type": "response.completed", "response": {"id": f"resp_{turn}", "usage": usage}}))


def gemini_answer(turn):
    s = step(turn)
    if "tool" in s:
        part = {"functionCall": {"id": f"call_e2e_{turn}", "name": s["tool"], "args": s["input"]}}
    else:
        part = {"text": s["text"]}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}}
    return f"data: {json.dumps(chunk)}\n\n"


def chat_answer(turn, model):
    s = step(turn)
    base = {"id": f"chatcmpl-{turn}", "object": "chat.completion.chunk", "created": 1796174262, "model": model}
    if "tool" in s:
        delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, "id": f"call_e2e_{turn}",
                 "type": "function", "function": {"name": s["tool"], "arguments": json.dumps(s["input"])}}]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": s["text"]}, "stop"
    chunks = [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}]),
              dict(base, choices=[], usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_body(self, code, ctype, data):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_body(404, "application/json", b'{"error":"not found"}')

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with LOCK:
                with open(LOG, "a") as f:
                    f.write(json.dumps({"path": self.path, "body": body}) + "\n")
            path = self.path.split("?")[0]
            if path.endswith("/responses"):
                self.send_body(200, "text/event-stream", responses_answer(responses_turn(body)).encode())
            elif ":streamGenerateContent" in path:
                self.send_body(200, "text/event-stream", gemini_answer(gemini_turn(body)).encode())
            elif ":countTokens" in path:
                self.send_body(200, "application/json", b'{"totalTokens": 100}')
            elif path.endswith("/chat/completions"):
                answer = chat_answer(chat_turn(body), body.get("model", "mock"))
                self.send_body(200, "text/event-stream", answer.encode())
            else:
                self.send_body(404, "application/json", b'{"error":"not found"}')
        except Exception as e:  # always answer: a silent mock hangs some clients
            self.send_body(500, "application/json", json.dumps({"error": str(e)}).encode())


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
