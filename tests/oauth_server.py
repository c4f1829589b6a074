#!/usr/bin/env python3
"""An OpenRouter-style PKCE authorization server on 127.0.0.1 for tst_guillm.

Usage: oauth_server.py. Prints "PORT <n>" once listening.
  GET  /auth?callback_url=URL&code_challenge=C&code_challenge_method=S256
       remembers C under a new one-time code and redirects (302) to URL with ?code=CODE added,
       keeping URL's own query (where kforge carries its state)
  POST /api/v1/auth/keys {"code", "code_verifier", "code_challenge_method"}
       200 {"key": ...} when base64url(sha256(code_verifier)) is the code's challenge; otherwise
       400 or 403 with {"error": {"message": ...}}, as OpenRouter answers
  GET  /__issued   the keys handed out so far
"""
import base64
import hashlib
import json
import secrets
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
codes = {}   # code -> {"challenge": str, "used": bool}
issued = []


def s256(verifier):
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, message):
        self.reply(status, {"error": {"code": status, "message": message}})

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/__issued":
            with lock:
                return self.reply(200, issued)
        if url.path != "/auth":
            return self.error(404, "no such page")
        q = dict(urllib.parse.parse_qsl(url.query))
        callback = urllib.parse.urlsplit(q.get("callback_url", ""))
        if callback.scheme != "http" or callback.hostname not in ("127.0.0.1", "localhost"):
            return self.error(400, "callback_url must be a loopback http address")
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return self.error(400, "code_challenge and code_challenge_method=S256 are required")
        code = "code-" + secrets.token_hex(8)
        with lock:
            codes[code] = {"challenge": q["code_challenge"], "used": False}
        query = urllib.parse.parse_qsl(callback.query) + [("code", code)]
        location = urllib.parse.urlunsplit((callback.scheme, callback.netloc, callback.path, urllib.parse.urlencode(query), ""))
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if urllib.parse.urlsplit(self.path).path != "/api/v1/auth/keys":
            return self.error(404, "no such endpoint")
        try:
            req = json.loads(body)
        except ValueError:
            return self.error(400, "the body is not JSON")
        with lock:
            entry = codes.get(req.get("code"))
            if not entry or entry["used"]:
                return self.error(403, "Invalid code: unknown or already used")
            entry["used"] = True
            if req.get("code_challenge_method") != "S256":
                return self.error(400, "code_challenge_method must be S256")
            if s256(str(req.get("code_verifier", ""))) != entry["challenge"]:
                return self.error(403, "Invalid code_verifier: it does not match the code_challenge")
            key = "sk-or-v1-" + secrets.token_hex(32)
            issued.append(key)
        self.reply(200, {"key": key, "user_id": "user_kforge_test"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
