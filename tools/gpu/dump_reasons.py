"""Prints every node's status and full reasons from a session file (the CLI's show cuts them)."""
import json
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for node_id, status, reasons in db.execute("SELECT id, status, reasons_json FROM nodes ORDER BY id"):
    for r in json.loads(reasons):
        print(f"#{node_id} {status}: {r.get('code')}: {r.get('message')}")
