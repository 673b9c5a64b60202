"""A hand-written MCP server over stdio (no SDK) that says wrong things on purpose, for the bad-input tests.

Tools: ``good`` (a text result, listed twice), ``bad-schema`` (its inputSchema is a string that is not JSON),
``malformed`` (a result whose image has no data), ``exit`` (the process exits mid-call), ``ask`` (before it
answers, it writes a line that is not JSON and sends the client a ``ping`` and a ``roots/list`` request, and answers
with the client's two replies as JSON text).
With ``--exit-at-start`` it exits before the handshake.

Called ``exit`` with ``{"close_stdin": true}`` it closes its stdin and lingers with its stdout open until it is
signalled. With ``--hang-up-at-start`` (or when called ``exit`` with ``{"hang_up": true}``) it hangs up instead: it
closes its stdout, waits for its stdin to end (the client's shutdown closes it), writes ``stdin closed`` to the file
``MCP_TEST_LOG`` names, and lingers a second before it exits, so the client's shutdown is under way for that second.
"""

from __future__ import annotations

import json
import os
import sys
import time

TOOLS = [
    {"name": "good", "description": "Says ok.", "inputSchema": {"type": "object"}},
    {"name": "bad-schema", "description": "A schema that is not JSON.", "inputSchema": "{type: object"},
    {"name": "malformed", "description": "A result with an image without data.", "inputSchema": {"type": "object"}},
    {"name": "exit", "description": "Exits mid-call.", "inputSchema": {"type": "object"}},
    {"name": "ask", "description": "Asks the client things first.", "inputSchema": {"type": "object"}},
    {"name": "good", "description": "The same name again.", "inputSchema": {"type": "object"}},
]


def hang_up() -> None:
    sys.stdout.close()
    os.close(1)
    sys.stdin.buffer.read()  # until the client closes it
    with open(os.environ["MCP_TEST_LOG"], "a") as log:
        log.write("stdin closed\n")
    time.sleep(1.0)
    sys.exit(0)


def stop_reading() -> None:
    """Close stdin and linger, stdout still open, until the client's shutdown signals the process."""
    sys.stdin.close()
    os.close(0)
    time.sleep(60)
    sys.exit(0)


def ask_the_client() -> list[dict]:
    """Noise, then two requests to the client; the client's replies, by request id."""
    sys.stdout.write("this line is not JSON\n")
    for request_id, method in (("s1", "ping"), ("s2", "roots/list")):
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}) + "\n")
    sys.stdout.flush()
    replies = [json.loads(sys.stdin.readline()) for _ in range(2)]
    return sorted(replies, key=lambda reply: reply["id"])


def answer(request: dict) -> dict | None:
    method = request.get("method")
    if method == "initialize":
        version = request["params"]["protocolVersion"]
        capabilities = {"tools": {"listChanged": False}}
        return {"protocolVersion": version, "capabilities": capabilities, "serverInfo": {"name": "odd", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = request["params"]["name"]
        if name == "good":
            return {"content": [{"type": "text", "text": "ok"}], "isError": False}
        if name == "malformed":
            return {"content": [{"type": "image", "mimeType": "image/png"}], "isError": False}
        if name == "ask":
            return {"content": [{"type": "text", "text": json.dumps(ask_the_client())}]}
        if name == "exit":
            if request["params"].get("arguments", {}).get("hang_up"):
                hang_up()
            if request["params"].get("arguments", {}).get("close_stdin"):
                stop_reading()
            sys.exit(3)
    if method == "ping":
        return {}
    return None


def main() -> None:
    if "--exit-at-start" in sys.argv:
        print("odd_server: refusing to start", file=sys.stderr)
        sys.exit(1)
    if "--hang-up-at-start" in sys.argv:
        hang_up()
    while line := sys.stdin.readline():
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        result = answer(request)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}}
        else:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
