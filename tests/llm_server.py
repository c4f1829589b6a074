#!/usr/bin/env python3
"""Replays provider responses for tst_llm on 127.0.0.1.

Usage: llm_server.py DATA_DIR. Prints "PORT <n>" once listening. The test scripts it:
  POST /__script   {"responses": [R, ...], "repeat_last": false}   replaces the queue of responses
  POST /__requests                                                returns every request received since the script
Any other POST takes the next R: {"status": 200, "file": "name" | "body": "text", "headers": {...},
"stream": false, "delay": 0, "chunk_delay": 0}. A stream is sent as the file's server-sent events, one
event per write, chunk_delay seconds apart; delay holds the response back before its headers.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = sys.argv[1] if len(sys.argv) > 1 else "."
lock = threading.Lock()
state = {"responses": [], "repeat_last": False, "requests": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=None, content_type="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length).decode("utf-8", "replace")
        if self.path == "/__script":
            script = json.loads(body)
            with lock:
                state["responses"] = list(script.get("responses", []))
                state["repeat_last"] = bool(script.get("repeat_last", False))
                state["requests"] = []
            return self.reply(200, "{}")
        if self.path == "/__requests":
            with lock:
                return self.reply(200, json.dumps(state["requests"]))
        with lock:
            state["requests"].append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            if state["responses"]:
                r = state["responses"][0] if state["repeat_last"] and len(state["responses"]) == 1 else state["responses"].pop(0)
            else:
                r = {"status": 500, "body": json.dumps({"error": {"message": "llm_server.py: no scripted response left"}})}
        try:
            self.respond(r)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout or a cancellation under test)

    def respond(self, r):
        time.sleep(r.get("delay", 0))
        text = r["body"] if "body" in r else open(os.path.join(DATA, r["file"]), encoding="utf-8").read()
        status = r.get("status", 200)
        if not r.get("stream"):
            return self.reply(status, text, r.get("headers"))
        self.send_response(status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        sep = "\r\n\r\n" if "\r\n\r\n" in text else "\n\n"
        for event in [e for e in text.split(sep) if e.strip()]:
            self.wfile.write((event + sep).encode())
            self.wfile.flush()
            time.sleep(r.get("chunk_delay", 0))
        self.close_connection = True


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
