"""The ``agentmsg`` command line.

``serve`` runs the server; ``send``, ``tail``, ``approve``, ``sessions``, ``tools`` and ``mcp`` talk
to one (``--target``, default ``$AGENTMSG_TARGET`` or 127.0.0.1:50051, with
``--token`` / ``$AGENTMSG_TOKEN``); ``demo`` and ``validate`` work offline.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import logging
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import agentmsg as am
from agentmsg import dict_form, formats
from agentmsg._eventloop import LOOPS, loop_name
from agentmsg._eventloop import run as run_on
from agentmsg._grpcsetup import prefer_tcp_endpoints
from agentmsg._logtext import quiet_grpc_core

DEFAULT_TARGET = "127.0.0.1:50051"


def _load(path: str, form: str) -> am.Conversation:
    raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    if form == "auto":
        form = "protojson" if raw.lstrip()[:1] == b"{" else "seed1" if raw.lstrip()[:1] == b"[" else "binpb"
    if form == "binpb":
        return am.Conversation.from_bytes(raw)
    if form == "protojson":
        return am.Conversation.from_json(raw)
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise am.DecodeError(f"{path}: not JSON: {exc}") from None
    return am.Conversation(dict_form.messages_from_dicts(data))


def _validate(args: argparse.Namespace) -> int:
    conversation = _load(args.file, args.format)
    found = am.violations(conversation)
    for violation in found:
        print(violation)
    print(f"{len(conversation)} messages, {len(found)} violations")
    return 1 if found else 0


def _demo(_: argparse.Namespace) -> int:
    from agentmsg._demo import run

    return run(sys.stdout)


def _redact(url: str) -> str:
    """A database URL without its password, for the startup line."""
    from agentmsg.service.stores.postgres import _redact as redact

    return redact(url)


def _count(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _budget(text: str) -> int:
    """A budget flag's value: a count of calls, 0 for no limit."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (0 turns the limit off)")
    return value


def port_number(text: str) -> int:
    """A port flag's value: 0 (any free port) to 65535. A port outside that range is refused, not wrapped (the
    kernel would take 70000 as 4464 and -1 as 65535, and serve somewhere nobody asked for)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0 to 65535; 0 picks a free one)")
    return value


class _Parser(argparse.ArgumentParser):
    """Refuses a bad command line in one line on stderr (``agentmsg serve: error: ...``), exit status 2; ``--help``
    shows the usage."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _read(path: str | None) -> bytes | None:
    return Path(path).read_bytes() if path else None


def _client(args: argparse.Namespace) -> Any:
    from agentmsg.service import Client

    return Client(
        args.target,
        token=args.token,
        root_certificates=_read(args.ca),
        private_key=_read(args.key),
        certificate_chain=_read(args.cert),
        timeout=args.timeout,
    )


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _serve(args: argparse.Namespace) -> int:
    from agentmsg.service import ServerConfig, serve
    from agentmsg.service.access import FULL, Scope, load_token_file, parse_token
    from agentmsg.service.limits import RequestLimits
    from agentmsg.service.server import Running

    grants: dict[str, Scope] = dict(parse_token(spec) for spec in args.token or [])
    if args.token_file:
        grants.update(load_token_file(args.token_file))
    env_token = os.environ.get("AGENTMSG_TOKEN")
    if env_token and not grants:
        grants = {env_token: FULL}  # the variable holds a token as it is (full access)
    tokens = list(grants)
    hosted: dict[str, str] = {}
    for entry in args.mcp or []:
        name, equals, server = entry.partition("=")
        if not equals or not name or not server:
            raise am.ValidationError.single("--mcp", "format", f"expected NAME=COMMAND or NAME=URL, got {entry!r}")
        if name in hosted:
            raise am.ValidationError.single("--mcp", "unique", f"the name {name!r} is given twice")
        hosted[name] = server
    config = ServerConfig(
        host=args.host,
        port=args.port,
        db=args.store or (None if args.memory else args.db),
        pool_size=args.pool_size,
        statement_timeout=args.statement_timeout,
        group_wait=args.group_wait_ms / 1000,
        advertise=args.advertise,
        peer_ca=_read(args.peer_ca),
        grants=grants,
        tls_cert=_read(args.tls_cert),
        tls_key=_read(args.tls_key),
        tls_client_ca=_read(args.tls_client_ca),
        max_message_bytes=int(args.max_message_mb * 1024 * 1024),
        limits=RequestLimits(args.max_blocks, args.max_request_blocks, args.max_stream_events),
        reply_cache_bytes=int(args.reply_cache_mb * 1024 * 1024),
        reflection=not args.no_reflection,
        grace=args.grace,
        metrics_port=args.metrics_port,
        retain_days=args.retain_days,
        http_port=args.http,
        http_host=args.http_host,
        cors_origins=args.cors_origin or (),
        mcp_servers=hosted,
    )
    # The budget flags left out keep ServerConfig's defaults (agentmsg.service.budgets).
    for name in ("max_streams", "max_streams_per_tenant", "max_unary", "max_unary_per_tenant"):
        if getattr(args, name) is not None:
            setattr(config, name, getattr(args, name))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    for chatty in ("mcp", "httpx"):  # the hosted MCP servers' SDK: a line per request
        logging.getLogger(chatty).setLevel(logging.WARNING)

    def ready(running: Running) -> None:
        store = (
            f"PostgreSQL {_redact(args.store)}" if args.store else "in memory" if args.memory else f"SQLite {config.db}"
        )
        scoped = sum(1 for scope in grants.values() if scope is not FULL)
        auth = f"{len(tokens)} token(s), {scoped} scoped" if tokens else "no auth"
        tls = "mTLS" if config.tls_client_ca else "TLS" if config.tls_cert else "plaintext"
        print(f"agentmsg serving on {config.host}:{running.port} ({store}, {auth}, {tls}, {loop_name()})", flush=True)
        if running.metrics_port is not None:
            print(f"agentmsg metrics on http://{config.host}:{running.metrics_port}/metrics", flush=True)
        if running.http_port is not None:
            cors = f"CORS for {', '.join(config.cors_origins)}" if config.cors_origins else "no CORS"
            print(
                f"agentmsg serving Connect and gRPC-Web on http://{_hostport(config.http_host, running.http_port)} "
                f"({cors})",
                flush=True,
            )
            print(f"agentmsg viewer on http://{_hostport(config.http_host, running.http_port)}/", flush=True)
        for name, mcp in running.mcp.items():
            state = f"{len(mcp.tools)} tool(s) as {name}.*" if mcp.registered.is_set() else f"down: {mcp.last_error}"
            print(f"agentmsg hosting MCP server {name} ({hosted[name]}): {state}", flush=True)

    run_on(serve(config, ready=ready), args.loop)
    return 0


def _send(args: argparse.Namespace) -> int:
    message: am.BaseMessage
    if args.file:
        message = next(iter(_load(args.file, args.format)))
    else:
        factories = {
            "user": am.UserMessage.text,
            "system": am.SystemMessage.text,
            "assistant": am.AssistantMessage.text,
        }
        message = factories[args.role](args.text)
    with _client(args) as client:
        offset = client.append(args.session, message)
    print(f"{args.session}#{offset} {message.id}")
    return 0


def _tail(args: argparse.Namespace) -> int:
    from agentmsg._pretty import event_line, message_lines
    from agentmsg.service import Live, Logged

    seen = 0
    with _client(args) as client:
        if args.tree:
            from agentmsg._pretty import block_line
            from agentmsg.sessions import Session

            session = Session([item.message for item in client.history(args.session)], session_id=args.session)
            if not len(session):
                raise am.NotFoundError(f"no session {args.session!r} (it has no messages)")
            leaf = session.leaf_id
            on_path = {entry.id for entry in session.path()} if leaf else set()
            for depth, entry in session.tree_lines():
                role = entry.role.value if entry.role else "unknown"
                first = block_line(entry.contents[0]) if entry.contents else ""
                if isinstance(entry, (am.BranchSummaryMessage, am.CompactionSummaryMessage)):
                    first = f"summary    {entry.summary[:70]}"
                mark = "*" if entry.id in on_path else " "
                print(f"{mark} {'  ' * depth}{entry.id:<14.14} {role:<18} {first}", flush=True)
            return 0
        if not args.follow:
            for item in client.history(args.session, after=args.after):
                print("\n".join(message_lines(item.offset, item.message)), flush=True)
                seen += 1
            if not seen and not args.after:  # sessions begin with their first message: none, no session
                raise am.NotFoundError(f"no session {args.session!r} (it has no messages)")
            return 0
        for entry in client.subscribe(args.session, after=args.after, live_events=args.live, timeout=None):
            if isinstance(entry, Live):
                print(event_line(entry.event), flush=True)
                continue
            assert isinstance(entry, Logged)
            print("\n".join(message_lines(entry.offset, entry.message)), flush=True)
            seen += 1
            message = entry.message
            if args.count and seen >= args.count:
                return 0
            if (
                args.until_stop
                and isinstance(message, am.AssistantMessage)
                and message.stop_reason in (am.StopReason.STOP, am.StopReason.ERROR, am.StopReason.ABORT)
            ):
                return 0
    return 0


def _sessions(args: argparse.Namespace) -> int:
    with _client(args) as client:
        for info in client.sessions():
            print(f"{info.session_id:<32} {info.last_offset:>8} messages  last {info.update_time:%Y-%m-%d %H:%M:%S}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    with _client(args) as client:
        removed = client.delete_session(args.session)
    print(
        f"deleted {args.session} ({removed} messages)" if removed else f"no session {args.session!r}: nothing deleted"
    )
    return 0


def _approve(args: argparse.Namespace) -> int:
    decision = am.ToolApprovalContent(
        args.call_id,
        am.ToolApprovalDecision.DENIED if args.deny else am.ToolApprovalDecision.APPROVED,
        args.reason,
        decided_by=args.by if args.by is not None else getpass.getuser(),
        decided_at=datetime.now(UTC),
    )
    with _client(args) as client:
        offset = client.append(args.session, am.UserMessage([decision]))
    print(f"{args.session}#{offset} {'denied' if args.deny else 'approved'} {args.call_id}")
    return 0


def _tools(args: argparse.Namespace) -> int:
    with _client(args) as client:
        if args.action == "list":
            for registered in client.list_tools():
                tool = registered.tool
                kind = tool.kind.value if tool.kind else "-"
                print(f"{tool.name:<24} {kind:<10} {registered.runner_name:<16} {tool.description[:60]}")
            return 0
        call = am.ToolCallContent(args.call_id, args.name, arguments=args.args)
        result = client.call_tool(call, timeout=args.timeout, session_id=args.session or "")
        print(result.text)
        return 1 if result.is_error else 0


# The request body key that holds each format's messages, when the converter writes a bare list.
_MESSAGES_KEY = {"openai-chat": "messages", "openai-responses": "input"}


def _convert_tools(args: argparse.Namespace, request: dict[str, Any], payload: Any, report: Any) -> Any:
    """Carry a request's ``tools`` over to the target format, or report them when it has no place for them."""
    from agentmsg.providers import tools as tool_formats
    from agentmsg.providers._common import ConversionError, Loss

    if args.source not in tool_formats.TOOL_FORMATS or args.target_format not in tool_formats.TOOL_FORMATS:
        what = args.source if args.source not in tool_formats.TOOL_FORMATS else args.target_format
        tools = request["tools"]
        count = len(tools) if isinstance(tools, list) else 1
        loss = Loss("tools", f"{count} tool definition(s)", f"the {what} format has no tools")
        if args.strict:
            raise ConversionError(args.target_format, [loss])
        report.losses.append(loss)
        return payload
    definitions = tool_formats.from_tools(args.source, request, report=report)
    start = len(report.losses)
    written = tool_formats.to_tools(args.target_format, definitions, strict=args.strict, report=report)
    # The writer names each definition by its index; in the request they sit under `tools`.
    report.losses[start:] = [Loss(f"tools{loss.path}", loss.what, loss.reason) for loss in report.losses[start:]]
    if isinstance(payload, list):
        payload = {_MESSAGES_KEY[args.target_format]: payload}
    payload["tools"] = written
    return payload


def _convert(args: argparse.Namespace) -> int:
    from agentmsg.providers._common import ConversionReport

    raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise am.DecodeError(f"{args.file}: not JSON: {exc}") from None
    report = ConversionReport()
    messages = formats.read(args.source, data, pass_through_unknown=args.pass_through_unknown, report=report)
    payload = formats.write(args.target_format, messages, strict=args.strict, report=report)
    if isinstance(data, dict) and data.get("tools") is not None:
        payload = _convert_tools(args, data, payload, report)
    print(json.dumps(payload, ensure_ascii=False, indent=2 if args.pretty else None))
    for loss in report.losses:
        print(f"lost: {loss}", file=sys.stderr)
    for safe, original in report.id_map.items():
        print(f"tool call id {original!r} written as {safe!r}", file=sys.stderr)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    try:
        from agentmsg import mcp
        from agentmsg.service import AsyncClient
    except ImportError as exc:
        raise am.AgentMsgError(f"{exc}: agentmsg mcp needs the mcp extra: pip install 'agentmsg[mcp]'") from None

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    log = logging.getLogger("agentmsg.mcp")
    for chatty in ("mcp", "httpx", "uvicorn.access"):  # a line per request: the bridge's own lines say what matters
        logging.getLogger(chatty).setLevel(logging.WARNING)
    tls: dict[str, Any] = {
        "root_certificates": _read(args.ca),
        "private_key": _read(args.key),
        "certificate_chain": _read(args.cert),
    }
    if args.mcp_command == "runner":
        command = list(args.server_command)
        if command[:1] == ["--"]:  # the separator; a later "--" belongs to the server's own arguments
            command = command[1:]
        if bool(command) == bool(args.url):
            raise am.ValidationError.single(
                "command", "required", "give the MCP server as -- COMMAND [ARGS...] or --url URL"
            )
        server: mcp.MCPServerSpec = args.url or mcp.stdio_server(command[0], command[1:])
        grace = {} if args.grace is None else {"grace": args.grace}  # else the runner's default
        runner = mcp.McpRunner(
            args.target,
            server,
            name=args.name,
            prefix=args.prefix,
            token=args.token,
            start_attempts=args.start_attempts,
            **tls,
            **grace,
        )

        async def serve_runner() -> None:
            log.info("on %s's event loop", loop_name())
            await runner.serve(handle_signals=True)

        with contextlib.suppress(KeyboardInterrupt):  # as McpRunner.run(), with the loop in the log
            run_on(serve_runner(), args.loop)
        return 0

    async def serve() -> None:
        log.info("on %s's event loop", loop_name())
        async with AsyncClient(args.target, token=args.token, **tls) as client:
            server = mcp.create_mcp_server(client, call_timeout=args.timeout, poll_interval=args.poll)
            if args.http is not None:
                await mcp.serve_http(server, args.http, host=args.host)
            else:
                await mcp.serve_stdio(server)

    run_on(serve(), args.loop)
    return 0


def _loop_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the event loop: uvloop, asyncio, or auto (default: uvloop when it is installed, else asyncio)",
    )


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", default=os.environ.get("AGENTMSG_TARGET", DEFAULT_TARGET), help="host:port")
    parser.add_argument("--token", default=os.environ.get("AGENTMSG_TOKEN"), help="bearer token")
    parser.add_argument("--ca", help="PEM CA bundle: use TLS")
    parser.add_argument("--cert", help="PEM client certificate chain (mTLS)")
    parser.add_argument("--key", help="PEM client private key (mTLS)")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-call deadline in seconds")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="agentmsg", description="The schema-first message contract for LLM agents.")
    parser.add_argument("--version", action="version", version=f"agentmsg {am.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="every role and content kind: validated, round-tripped, sized")
    demo.set_defaults(handler=_demo)

    check = commands.add_parser("validate", help="check a conversation file against the contract's rules")
    check.add_argument("file", help="a Conversation as binary protobuf, ProtoJSON, or seed-1 dicts (- for stdin)")
    check.add_argument("--format", choices=["auto", "binpb", "protojson", "seed1"], default="auto")
    check.set_defaults(handler=_validate)

    convert = commands.add_parser("convert", help="convert a conversation between formats")
    convert.add_argument("--from", dest="source", choices=formats.FORMATS, required=True, help="the input's format")
    convert.add_argument(
        "--to", dest="target_format", choices=formats.FORMATS, required=True, help="the output's format"
    )
    convert.add_argument("file", nargs="?", default="-", help="a JSON file (- or nothing: stdin)")
    convert.add_argument("--strict", action="store_true", help="fail instead of dropping what the target cannot hold")
    convert.add_argument(
        "--pass-through-unknown",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="keep unknown provider blocks verbatim (--no-pass-through-unknown: refuse them); default: the reader's",
    )
    convert.add_argument("--pretty", action="store_true", help="indent the output")
    convert.set_defaults(handler=_convert)

    serve = commands.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port_number, default=50051, help="0 picks a free port (printed)")
    serve.add_argument("--db", default="agentmsg.db", help="SQLite file (created if missing)")
    serve.add_argument("--memory", action="store_true", help="keep messages in memory only")
    serve.add_argument(
        "--store",
        metavar="URL",
        help="a postgresql:// URL: share one PostgreSQL with other nodes (needs agentmsg[postgres]); overrides --db",
    )
    serve.add_argument("--pool-size", type=int, default=10, help="PostgreSQL connections per node (default 10)")
    serve.add_argument(
        "--advertise", metavar="HOST:PORT", help="with --store: the address other nodes reach this one at"
    )
    serve.add_argument("--peer-ca", metavar="FILE", help="with --store and TLS: PEM CA of the other nodes")
    serve.add_argument(
        "--statement-timeout", type=float, default=10.0, help="PostgreSQL statement timeout in seconds (default 10)"
    )
    serve.add_argument(
        "--group-wait-ms",
        metavar="MS",
        type=float,
        default=1.0,
        help="SQLite and PostgreSQL: how long a group commit waits for the writers of the last one "
        "(default 1 ms; 0: never; at most 1000)",
    )
    serve.add_argument(
        "--token",
        action="append",
        metavar="TOKEN[=SCOPE]",
        help="accepted bearer token (repeatable); SCOPE limits it: comma-separated '*', 'PREFIX*' (sessions whose "
        "id starts with PREFIX), a session id, 'tools:call', 'tools:serve' (see docs/reliability.md)",
    )
    serve.add_argument("--token-file", help="file with one TOKEN or TOKEN=SCOPE per line ('#' comments)")
    serve.add_argument("--tls-cert", help="PEM certificate chain: serve TLS")
    serve.add_argument("--tls-key", help="PEM private key for --tls-cert")
    serve.add_argument("--tls-client-ca", help="PEM CA bundle: require client certificates (mTLS)")
    serve.add_argument("--max-message-mb", type=float, default=32.0, help="largest message accepted or sent")
    serve.add_argument(
        "--max-blocks", type=_count, default=1024, help="content blocks in one message, tool results' counted (1024)"
    )
    serve.add_argument("--max-request-blocks", type=_count, default=8192, help="content blocks in one request (8192)")
    serve.add_argument("--max-stream-events", type=_count, default=100_000, help="events in one PublishStream (100000)")
    serve.add_argument(
        "--reply-cache-mb", type=float, default=64.0, help="Subscribe replies kept framed for other subscribers (64)"
    )
    serve.add_argument(
        "--max-streams",
        type=_budget,
        help="long-lived streams (Subscribe, ServeTools, PublishStream, ...) open at once (default 4096; 0: no limit)",
    )
    serve.add_argument(
        "--max-streams-per-tenant",
        type=_budget,
        help="streams one token holds open at once (default 1024; 0: no limit); raise for many subscribers",
    )
    serve.add_argument("--max-unary", type=_budget, help="unary calls in progress at once (default 1024; 0: no limit)")
    serve.add_argument(
        "--max-unary-per-tenant",
        type=_budget,
        help="unary calls one token has in progress at once (default 256; 0: no limit); health is never counted",
    )
    serve.add_argument("--no-reflection", action="store_true", help="turn server reflection off")
    serve.add_argument("--grace", type=float, default=5.0, help="seconds calls in flight get at shutdown")
    serve.add_argument(
        "--metrics-port",
        type=port_number,
        help="serve Prometheus metrics at http://HOST:PORT/metrics (0: any free port; needs agentmsg[otel])",
    )
    serve.add_argument(
        "--retain-days",
        type=float,
        metavar="DAYS",
        help="delete sessions whose last append is older than DAYS (swept every minute); default: keep them all",
    )
    serve.add_argument(
        "--http",
        type=port_number,
        metavar="PORT",
        help="also serve Connect (JSON and binary) and gRPC-Web on this HTTP port (0: any free port; "
        "needs agentmsg[http]); PublishStream and ServeTools stay gRPC-only",
    )
    serve.add_argument(
        "--http-host",
        default="127.0.0.1",
        help="the address the HTTP port binds (default: this machine only)",
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="a browser origin allowed to call the HTTP port (https://app.example; * for any); repeat for more. "
        "Default: none (no CORS headers)",
    )
    serve.add_argument(
        "--mcp",
        action="append",
        metavar="NAME=COMMAND|NAME=URL",
        help="host an MCP server (repeatable; needs agentmsg[mcp]): run COMMAND over stdio (a command line, split as "
        "a shell would) or reach an http(s):// URL (streamable HTTP); its tools are served as NAME.TOOL",
    )
    _loop_option(serve)
    serve.set_defaults(handler=_serve)

    send = commands.add_parser("send", help="append a message to a session")
    send.add_argument("session")
    send.add_argument("--text", help="the message text")
    send.add_argument("--role", choices=["user", "system", "assistant"], default="user")
    send.add_argument("--file", help="a message file instead (ProtoJSON Conversation or seed-1 dicts; first message)")
    send.add_argument("--format", choices=["auto", "binpb", "protojson", "seed1"], default="auto")
    _connection_options(send)
    send.set_defaults(handler=_send)

    tail = commands.add_parser("tail", help="print a session's messages, by role and content kind")
    tail.add_argument("session")
    tail.add_argument("--after", type=int, default=0, help="start after this offset")
    tail.add_argument("-f", "--follow", action="store_true", help="keep following new messages")
    tail.add_argument("--live", action="store_true", help="with --follow: show messages as they are generated")
    tail.add_argument("--count", type=int, default=0, help="with --follow: exit after this many messages")
    tail.add_argument("--until-stop", action="store_true", help="with --follow: exit after a finished assistant answer")
    tail.add_argument("--tree", action="store_true", help="show the session as a tree (* marks the path to the leaf)")
    _connection_options(tail)
    tail.set_defaults(handler=_tail)

    delete = commands.add_parser("delete", help="delete a session and all its messages")
    delete.add_argument("session")
    _connection_options(delete)
    delete.set_defaults(handler=_delete)

    approve = commands.add_parser(
        "approve", help="approve (or --deny) a tool call that waits for a person's decision in a session"
    )
    approve.add_argument("session")
    approve.add_argument("call_id", help="the id of the tool call decided")
    approve.add_argument("--deny", action="store_true", help="deny the call: it does not run; the model reads why")
    approve.add_argument("--reason", default="", help="why, for the model and the log")
    approve.add_argument("--by", help="who decides (default: the user name of this process)")
    _connection_options(approve)
    approve.set_defaults(handler=_approve)

    sessions = commands.add_parser("sessions", help="list the sessions")
    _connection_options(sessions)
    sessions.set_defaults(handler=_sessions)

    tools = commands.add_parser("tools", help="list tools, or call one")
    tools.add_argument("action", choices=["list", "call"], nargs="?", default="list")
    tools.add_argument("name", nargs="?", help="with call: the tool")
    tools.add_argument("--args", default="{}", help="with call: the arguments as JSON text")
    tools.add_argument("--call-id", default="cli-call", help="with call: the call id")
    tools.add_argument(
        "--session", help="with call: the session the call belongs to (needed by a tool that requires approval)"
    )
    _connection_options(tools)
    tools.set_defaults(handler=_tools)
    mcp = commands.add_parser("mcp", help="MCP both ways: an MCP server as a tool runner, the tools as an MCP server")
    mcp_commands = mcp.add_subparsers(dest="mcp_command", required=True)
    runner = mcp_commands.add_parser(
        "runner",
        help="serve an MCP server's tools through agentmsg",
        usage="agentmsg mcp runner [options] (-- COMMAND [ARGS...] | --url URL)",
    )
    runner.add_argument("--url", help="a streamable HTTP MCP endpoint (instead of a command)")
    runner.add_argument("--prefix", default="", help="put this in front of every tool name (e.g. 'files.')")
    runner.add_argument("--name", help="the runner's name (default: mcp:COMMAND)")
    runner.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT, how long calls in flight may finish before they are answered cancelled (default 10)",
    )
    runner.add_argument(
        "--start-attempts",
        type=int,
        default=5,
        metavar="N",
        help="stop with an error when the MCP server never came up in N tries in a row (default 5; once up, it is "
        "restarted whenever it exits); a command that does not exist stops it at once",
    )
    runner.add_argument("server_command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]: run over stdio")
    _loop_option(runner)
    _connection_options(runner)
    runner.set_defaults(handler=_mcp)
    mcp_serve = mcp_commands.add_parser("serve", help="the cluster's tools as an MCP server (stdio, or --http PORT)")
    mcp_serve.add_argument(
        "--http", type=port_number, metavar="PORT", help="streamable HTTP on PORT (at /mcp) instead of stdio"
    )
    mcp_serve.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on")
    mcp_serve.add_argument("--poll", type=float, default=1.0, help="seconds between checks for changed tools")
    _loop_option(mcp_serve)
    _connection_options(mcp_serve)
    mcp_serve.set_defaults(handler=_mcp)
    return parser


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def main(argv: Sequence[str] | None = None) -> int:
    quiet_grpc_core()
    prefer_tcp_endpoints()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "send" and not (args.text or args.file):
        parser.error("send needs --text or --file")
    if args.command == "tools" and args.action == "call" and not args.name:
        parser.error("tools call needs a tool name")
    if args.command == "serve" and args.cors_origin and args.http is None:
        parser.error("--cors-origin needs --http PORT (CORS concerns the HTTP port)")
    if args.command == "serve" and args.http is not None and not 0 <= args.http <= 65535:
        parser.error(f"--http takes a port from 0 to 65535, got {args.http}")
    if args.command == "serve" and args.retain_days is not None and not args.retain_days > 0:
        parser.error(f"--retain-days takes a positive number of days, got {args.retain_days:g}")
    if args.command == "serve" and not 0 <= args.group_wait_ms <= 1000:
        parser.error(f"--group-wait-ms takes 0 to 1000 milliseconds, got {args.group_wait_ms:g}")
    if args.command == "serve" and args.store and not args.store.startswith(("postgresql://", "postgres://")):
        parser.error(f"--store takes a postgresql:// URL, got {args.store!r} (an SQLite file goes in --db)")
    try:
        code: int = args.handler(args)
    except am.UnavailableError as exc:
        target = getattr(args, "target", None)
        hint = f"cannot reach the server at {target}: " if target and args.command != "serve" else ""
        print(f"agentmsg: {hint}{_one_line(exc)}", file=sys.stderr)
        return 2
    except am.DeadlineExceededError as exc:
        target = getattr(args, "target", None)
        where = f"the server at {target}" if target else "the server"
        print(f"agentmsg: no answer from {where} within the deadline ({_one_line(exc)})", file=sys.stderr)
        return 2
    except (am.AgentMsgError, OSError) as exc:
        print(f"agentmsg: {_one_line(exc)}", file=sys.stderr)
        return 2
    except ImportError as exc:  # a module an extra brings (the commands that need one say which)
        print(f"agentmsg: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return code
