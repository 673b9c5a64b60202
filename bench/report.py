"""Combine the benchmark scripts' JSON into ``bench/results.md`` (``make bench`` runs it last).

``python bench/report.py DIR [-o bench/results.md] [--command "make bench"]`` reads
``DIR/codec.json`` (``bench/run.py --json``), ``DIR/conversion.json``,
``DIR/streaming.json``, ``DIR/service.json``, ``DIR/http.json`` (``bench/connect_http.py``),
``DIR/reads.json``, ``DIR/cluster.json``, ``DIR/mcp.json``, ``DIR/a2a.json``,
``DIR/typescript.json``, ``DIR/hostile.json``, ``DIR/group_commit.json``, ``DIR/roundtrip.json``
(``bench/roundtrip_a2a.py``) and ``DIR/viewer.json`` (``bench/viewer.py``) (each optional) and writes one
Markdown file: the machine and versions, every target with PASS/MISS, the tables, and for every
missed target its profile and what bounds it. Nothing is measured here: every
figure comes from the JSON of the run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import BASELINE, LANGCHAIN, OPS, PYDANTIC_AI, WRAPPER, fmt_ratio, fmt_size, fmt_time

TIMES = "\u00d7"
DASH = "\u2013"
ARROW = "\u2192"
GE = "\u2265"


def load(directory: Path, name: str) -> dict[str, Any] | None:
    path = directory / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def verdict(passed: bool) -> str:
    return "**PASS**" if passed else "**MISS**"


def mib(bps: float) -> str:
    return f"{bps / 2**20:,.0f} MiB/s"


# --- sections -------------------------------------------------------------------------------


def header(runs: dict[str, dict[str, Any] | None], command: str) -> list[str]:
    codec = runs["codec"] or {}
    info = codec.get("machine", {})
    created = codec.get("created") or next((r["created"] for r in runs.values() if r and "created" in r), "?")
    quick = any(r.get("quick") or r.get("settings", {}).get("quick") for r in runs.values() if r)
    lines = [
        "# agentmsg benchmark results",
        "",
        "Written by `bench/report.py` from the JSON the benchmark scripts wrote in one run; regenerate with "
        "`make bench` rather than editing.",
        "",
        f"- **Date**: {created} (UTC){' — QUICK run (smoke figures, not for quoting)' if quick else ''}",
        f"- **Command**: `{command}`, which ran:",
    ]
    for name in NAMES:
        run = runs.get(name)
        if run:
            start = run.get("load_average") or run.get("machine", {}).get("load_average")
            end = run.get("load_average_end")
            load = (
                f"; 1-minute load average {start[0]:.2f} at the start, {end[0]:.2f} at the end" if start and end else ""
            )
            lines.append(f"  - `{run.get('command', '?')}` ({run.get('total_s', 0):.0f} s{load})")
    lines.append(
        f"  (a load average above ~1 before a script starts means other processes were using the "
        f"{info.get('cpu_usable', '?')} cores: compare ratios, not absolute times)"
    )
    if info:
        lines += [
            f"- **Machine**: {info.get('cpu')}, {info.get('cpu_count')} cores ({info.get('cpu_usable')} usable), "
            f"{info.get('memory')} memory; {info.get('platform')}",
            f"- **Versions**: {info.get('python')}; protobuf {info.get('protobuf')} ({info.get('protobuf_backend')} "
            f"backend); grpcio {info.get('grpcio')}; pydantic-ai-slim {info.get('pydantic-ai-slim')} (pydantic "
            f"{info.get('pydantic')}); langchain-core {info.get('langchain-core')}; orjson {info.get('orjson')}; "
            f"agentmsg {info.get('agentmsg')}",
        ]
        settings = codec.get("settings", {})
        lines.append(
            f"- **Method**: every figure is from this run. Codec and conversion: `time.perf_counter_ns`, loops "
            f"calibrated to ~{settings.get('time_s', '?')} s per repeat, {settings.get('repeats', '?')} repeats, "
            f"median [min{DASH}max] per operation, `gc.collect()` before each cell. Service: server, clients, echo "
            "and TCP peers in separate processes on 127.0.0.1, all sharing the cores above."
        )
    return lines


def targets_section(runs: dict[str, dict[str, Any] | None]) -> tuple[list[str], int]:
    rows: list[tuple[str, str, bool, bool]] = []
    codec = runs["codec"]
    if codec:
        for t in codec["targets"]:
            rows.append(("codec", f"{t['payload']}: {t['text']}", t["pass"], t.get("extra", False)))
        for t in codec.get("hot", {}).get("targets", []):
            rows.append(("hot path", t["text"], t["pass"], False))
    for name in (
        "conversion",
        "service",
        "http",
        "reads",
        "cluster",
        "observability",
        "mcp",
        "group_commit",
        "roundtrip",
        "viewer",
    ):
        run = runs.get(name)
        if run:
            rows.extend((name, t["text"], t["pass"], False) for t in run.get("targets", []))
    lines = ["## Targets", "", "| area | target (measured in this run) | result |", "|---|---|---|"]
    lines += [f"| {area} | {text} | {verdict(ok)} |" for area, text, ok, _ in rows]
    issue = [ok for *_, ok, extra in rows if not extra]
    checks = [ok for *_, ok, extra in rows if extra]
    lines += [
        "",
        f"{sum(issue)} of {len(issue)} of the issue's targets met"
        + (
            f"; {sum(checks)} of {len(checks)} like-for-like checks met (the wrapper's `decode` is lazy and the "
            "peers' is eager, so the checks compare decode+walk, which builds or visits every object on both "
            "sides)"
            if checks
            else ""
        )
        + ". Every miss is profiled below.",
    ]
    return lines, len(rows) - sum(issue) - sum(checks)


def codec_section(codec: dict[str, Any]) -> list[str]:
    lines = [
        "## Codec",
        "",
        "Per payload: median [min" + DASH + "max] per operation, and the ratio against raw generated protobuf "
        "(same payload, same operation). `decode` is lazy for the wrapper and upb (objects are made on access) "
        "and eager for pydantic-ai and LangChain; `decode+walk` visits every message and block, so it compares "
        "like with like.",
    ]
    for payload in codec["payloads"]:
        cells = {(r["contender"], r["op"]): r for r in payload["results"]}
        lines += ["", f"### {payload['group']} / {payload['name']}", "", payload["description"], ""]
        lines.append("| contender | size | " + " | ".join(OPS) + " |")
        lines.append("|---|---|" + "---|" * len(OPS))
        for contender in payload["contenders"]:
            name = contender["name"]
            parts = []
            for op in OPS:
                cell = cells[name, op]
                text = f"{fmt_time(cell['median_ns'])} [{fmt_time(cell['min_ns'])}{DASH}{fmt_time(cell['max_ns'])}]"
                ratio = "" if name == payload["baseline"] else f" {fmt_ratio(cell['ratio_vs_baseline'])}"
                parts.append(f"{text}{ratio}")
            shown = f"**{name}**" if name == WRAPPER else name
            lines.append(f"| {shown} | {fmt_size(contender['size'])} | " + " | ".join(parts) + " |")
        lines.append("")
        for contender in payload["contenders"]:
            lines.append(f"- {contender['name']}: {contender['note']}")
        for note in payload["notes"]:
            lines.append(f"- {note}")
    lines += ["", "### The wrapper against the peer libraries (how many times faster, same run)", ""]
    lines.append("| payload | vs | " + " | ".join(OPS) + " |")
    lines.append("|---|---|" + "---|" * len(OPS))
    for payload in codec["payloads"]:
        cells = {(r["contender"], r["op"]): r for r in payload["results"]}
        for peer in (PYDANTIC_AI, LANGCHAIN):
            if (peer, "encode") not in cells:
                continue
            ratios = [cells[peer, op]["median_ns"] / cells[WRAPPER, op]["median_ns"] for op in OPS]
            lines.append(f"| {payload['name']} | {peer} | " + " | ".join(f"{r:.1f}{TIMES}" for r in ratios) + " |")
    return lines


def hot_section(hot: dict[str, Any]) -> list[str]:
    """Building a message and decoding one: one operation per contender, ratio against raw protobuf."""
    lines = [
        "## Hot paths: building a message, decoding one",
        "",
        "One operation per contender: median [min" + DASH + "max], and the ratio against the same generated "
        "message built or read raw (fresh uuid4 id and current time on both sides when building).",
    ]
    for case in hot["cases"]:
        lines += ["", f"### {case['name']}", "", case["description"], ""]
        lines += ["| contender | median [min" + DASH + "max] | vs raw protobuf | what it does |", "|---|---|---|---|"]
        for row in case["results"]:
            shown = f"**{row['contender']}**" if row["contender"] == WRAPPER else row["contender"]
            lines.append(
                f"| {shown} | {fmt_time(row['median_ns'])} [{fmt_time(row['min_ns'])}{DASH}{fmt_time(row['max_ns'])}] "
                f"| {fmt_ratio(row['ratio_vs_baseline'])} | {row['note']} |"
            )
    return lines


def conversion_section(conversion: dict[str, Any]) -> list[str]:
    lines = [
        "## Conversion",
        "",
        f"{conversion['payload']}; LangChain gets the same messages as `langchain_core` objects "
        f"({conversion['langchain_messages']} of them: one ToolMessage per tool result).",
        "",
        "| converter | median [min" + DASH + "max] | vs LangChain's convert_to_openai_messages |",
        "|---|---|---|",
    ]
    for case in conversion["cases"]:
        lines.append(
            f"| {case['name']} | {fmt_time(case['median_ns'])} [{fmt_time(case['min_ns'])}{DASH}"
            f"{fmt_time(case['max_ns'])}] | {case['speedup_vs_langchain']:.2f}{TIMES} as fast |"
        )
    hosted = conversion.get("hosted")
    if hosted:
        targets = {t["name"]: t for t in conversion["targets"]}
        lines += [
            "",
            f"The same conversation with hosted tools and citations ({hosted['grown_messages']} answers carry a "
            "hosted web search, its three results and two citations; built from the neutral model), converted "
            "in back-to-back pairs with the plain one; the ratio is the median of the pair ratios.",
            "",
            "| format | plain, median | hosted, median | hosted / plain | losses reported (hosted) | target |",
            "|---|---|---|---|---|---|",
        ]
        for row in hosted["formats"]:
            target = targets[f"hosted_{row['format']}"]
            lines.append(
                f"| {row['format']} | {fmt_time(row['plain_median_ns'])} | {fmt_time(row['hosted_median_ns'])} | "
                f"{row['ratio']:.2f}{TIMES} | {row['hosted_losses']} | {LE} {hosted['limit']:g}{TIMES}: "
                f"{verdict(target['pass'])} |"
            )
    return lines


def frameworks_section(run: dict[str, Any]) -> list[str]:
    lines = [
        "## Agent frameworks",
        "",
        f"{run['payload']}: {run['json_bytes']} bytes as pydantic-ai JSON, {run['protobuf_bytes']} as agentmsg "
        f"protobuf; as OpenAI Agents items, {run['agents_items']} items ({run['agents_losses']} losses reported: "
        "the Anthropic-signed thinking, which the replay rule keeps from OpenAI). Each framework's own serialiser "
        "next to agentmsg's converters on the same history.",
        "",
        "| operation | median [min" + DASH + "max] |",
        "|---|---|",
    ]
    for case in [*run["pydantic_ai"], *run["openai_agents"]]:
        lines.append(
            f"| {case['name']} | {fmt_time(case['median_ns'])} [{fmt_time(case['min_ns'])}{DASH}"
            f"{fmt_time(case['max_ns'])}] |"
        )
    return lines


def streaming_section(streaming: dict[str, Any]) -> list[str]:
    lines = [
        "## Stream folding",
        "",
        "| stream | events | events/s, median [min" + DASH + "max] | per stream |",
        "|---|---|---|---|",
    ]
    for case in streaming["cases"]:
        lines.append(
            f"| {case['name']} | {case['events']:,} | {case['median_events_per_s'] / 1e6:.2f} M "
            f"[{case['min_events_per_s'] / 1e6:.2f}{DASH}{case['max_events_per_s'] / 1e6:.2f}] | "
            f"{case['median_ms_per_stream']:.2f} ms |"
        )
    return lines


def typescript_section(typescript: dict[str, Any]) -> list[str]:
    lines = [
        "## TypeScript SDK vs Python",
        "",
        f"`@agentmsg/sdk` on Node {typescript.get('node', '?')} and the Python library on the same inputs "
        "(`bench/typescript.py`): the two streams above folded, and the 100-message mixed conversation decoded "
        "with validation and encoded. Median time per operation; the ratio is Python's time over Node's.",
        "",
        "| operation | Python | Node | Python / Node |",
        "|---|---|---|---|",
    ]
    for case in typescript["cases"]:
        lines.append(
            f"| {case['name']} | {case['python_ns'] / 1e6:.3f} ms | {case['node_ns'] / 1e6:.3f} ms | "
            f"{case['python_over_node']:.2f}{TIMES} |"
        )
    return lines


def service_section(service: dict[str, Any]) -> list[str]:
    targets = {t["name"]: t for t in service["targets"]}
    lines = [
        "## Service",
        "",
        "Memory store unless said otherwise; the subscribers decode every message into wrappers and touch its blocks.",
        "",
        "| measure | figure | target |",
        "|---|---|---|",
    ]
    for clients in (1, 16):
        a = service[f"append_c{clients}"]
        lines.append(
            f"| append latency, {clients} client(s) ({a['calls']:,} calls) | p50 {a['p50'] * 1e3:.3f} ms, p99 "
            f"{a['p99'] * 1e3:.3f} ms; bare gRPC echo of the same bytes p50 {a['echo_p50'] * 1e3:.3f} ms, p99 "
            f"{a['echo_p99'] * 1e3:.3f} ms: **{a['ratio']:.2f}{TIMES}** | p50 {LE} 2{TIMES} echo: "
            f"{verdict(targets[f'append_c{clients}']['pass'])} |"
        )
    for subs in (1, 10):
        s = service[f"subscribe_{subs}"]
        lines.append(
            f"| subscribe, {subs} subscriber(s) x {s['messages_each']:,} messages | median {s['median_rate']:,.0f} "
            f"msg/s per subscriber, slowest **{s['min_rate']:,.0f}**, {s['aggregate_rate']:,.0f} msg/s delivered "
            f"in all; CPU per message: subscriber {s['client_cpu_us_per_msg']:.2f} µs, server "
            f"{s['server_cpu_us_per_msg']:.2f} µs | {GE} 200k/s each: {verdict(targets[f'subscribe_{subs}']['pass'])} |"
        )
    img = service["image"]
    usage, bare_usage = img["server_usage_per_append"], img["bare_server_usage_per_call"]
    lines.append(
        f"| 1 MiB image append (median of {img.get('rounds', 1)} rounds of {img['appends']} appends) | "
        f"**{mib(img['agentmsg_Bps'])} = "
        f"{img['fraction_of_tcp']:.0%} of raw TCP** ({mib(img['tcp_Bps'])}); bare gRPC unary of the same request "
        f"bytes: {mib(img['bare_grpc_Bps'])} = {img['bare_fraction_of_tcp']:.0%} of TCP; agentmsg = "
        f"{img['agentmsg_Bps'] / img['bare_grpc_Bps']:.0%} of bare gRPC. Server per call: "
        f"{usage['cpu_ms']:.2f} ms CPU ({usage['user_ms']:.2f} user + {usage['sys_ms']:.2f} sys), "
        f"{usage['minflt']:.0f} page faults (bare: {bare_usage['cpu_ms']:.2f} ms ({bare_usage['user_ms']:.2f} + "
        f"{bare_usage['sys_ms']:.2f}), {bare_usage['minflt']:.0f}) "
        f"| {GE} 50% of TCP: {verdict(targets['image']['pass'])} |"
    )
    for label in ("memory", "SQLite"):
        st = service[f"store_{label}"]
        lines.append(
            f"| {label} store append throughput | {st['single']:,.0f} msg/s one message per call; "
            f"{st['batch100']:,.0f} msg/s with 100 per call | {DASH} |"
        )
    lines += ["", f"SQLite durability: {service['store_durability']}; every acknowledged append is committed."]
    return lines


LE = "\u2264"
PEER_TARGET = 10.0


def http_section(run: dict[str, Any]) -> list[str]:
    names = {"grpc": "gRPC", "connect-proto": "Connect binary", "connect-json": "Connect JSON"}
    a2a = run["transports"].get("a2a-http-json")
    if a2a:
        method = (
            f"`{run['command']}`: one agentmsg server (memory store) and, in another process, a2a-sdk "
            f"{run.get('a2a_sdk', '')}'s HTTP+JSON binding (its `DefaultRequestHandler` and REST routes under uvicorn, "
            "an agent answering every `SendMessage` with one fixed message), one caller at a time; "
            f"{run['rounds']} interleaved rounds of {run['per_round']} calls per caller (order rotated each round), "
            "ratios the median of the per-round p50 ratios. agentmsg's call is an append of a short text message, "
            "A2A's a `SendMessage` of the same text answered by the agent (a2a-sdk's own client). Server CPU is the "
            "serving process's per call. Subscribe reads "
            f"{run['prefill']:,} prefilled messages from offset 0 (A2A has no log to read)."
        )
    else:
        method = (
            f"`{run['command']}`: one server, one caller at a time; append p50/p99 over {run['appends']} appends of a "
            f"short text message, and Subscribe reading {run['prefill']:,} prefilled messages from offset 0."
        )
    lines = [
        "## gRPC, Connect and A2A HTTP+JSON side by side",
        "",
        method,
        "",
        "| transport | append p50 | append p99 | vs gRPC p50 | vs A2A HTTP+JSON p50 | server CPU per call "
        "| Subscribe |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, label in names.items():
        row = run["transports"][key]
        ratio = f"{row['append_ratio']:.2f}{TIMES}" if "append_ratio" in row else "1.00" + TIMES
        vs_a2a = f"{row['a2a_ratio']:.2f}{TIMES}" if "a2a_ratio" in row else DASH
        cpu = f"{row['server_cpu_us']:,.0f} µs" if "server_cpu_us" in row else DASH
        lines.append(
            f"| {label} | {fmt_time(row['append_p50_us'] * 1e3)} | {fmt_time(row['append_p99_us'] * 1e3)} | "
            f"{ratio} | {vs_a2a} | {cpu} | {row['subscribe_msgs_per_s']:,.0f} msg/s |"
        )
    if a2a:
        lines.append(
            f"| A2A HTTP+JSON (`SendMessage`) | {fmt_time(a2a['append_p50_us'] * 1e3)} | "
            f"{fmt_time(a2a['append_p99_us'] * 1e3)} | {DASH} | 1.00{TIMES} | {a2a['server_cpu_us']:,.0f} µs | {DASH} |"
        )
    return lines


def reads_section(reads: dict[str, Any]) -> list[str]:
    """``bench/reads.py``: BuildContext after a long compacted path, and a long session read through the client."""
    targets = {t["name"]: t for t in reads["targets"]}
    ctx, hist = reads["context"], reads["history"]
    med, cpu = ctx["median_s"], ctx["server_cpu_s"]
    lines = [
        "## Reading (`bench/reads.py`)",
        "",
        f"Server on SQLite, client in another process; interleaved rounds ({ctx['rounds']} for the context, "
        f"{hist['rounds']} for the long session), ratios are medians of the rounds' own ratios; server CPU per call "
        "beside each wall time.",
        "",
        "| measure | figure | target |",
        "|---|---|---|",
        f"| ListMessages (`client.history`) of the {ctx['messages']:,} context messages, first read | "
        f"{med['list'] * 1e3:.1f} ms (server CPU {cpu['list'] * 1e3:.1f} ms); read again from the reply cache "
        f"{med['list_again'] * 1e3:.1f} ms ({cpu['list_again'] * 1e3:.1f} ms) | {DASH} |",
        f"| BuildContext, {ctx['path_short']:,}-entry path | {med['context_short'] * 1e3:.1f} ms "
        f"(server CPU {cpu['context_short'] * 1e3:.1f} ms) | {DASH} |",
        f"| BuildContext, {ctx['path_long']:,}-entry path | {med['context_long'] * 1e3:.1f} ms "
        f"(server CPU {cpu['context_long'] * 1e3:.1f} ms): **{ctx['vs_list']:.2f}{TIMES}** ListMessages | "
        f"{LE} 1.3{TIMES}: {verdict(targets['context_vs_list']['pass'])} |",
        f"| BuildContext, long path vs short path | **{ctx['growth']:.2f}{TIMES}** | {LE} 1.2{TIMES}: "
        f"{verdict(targets['context_growth']['pass'])} |",
        f"| `client.history` of {hist['messages']:,} messages vs the `Subscribe` catch-up | "
        f"{hist['median_s']['history']:.3f} s vs {hist['median_s']['subscribe']:.3f} s (server CPU "
        f"{hist['server_cpu_s']['history']:.3f} vs {hist['server_cpu_s']['subscribe']:.3f} s): "
        f"**{hist['ratio']:.2f}{TIMES}** | {LE} 1.2{TIMES}: {verdict(targets['history_vs_subscribe']['pass'])} |",
    ]
    return lines


def cluster_section(cluster: dict[str, Any]) -> list[str]:
    targets = {t["name"]: t for t in cluster["targets"]}
    lengths = cluster["lengths"]
    lines = [
        "## Stores and the cluster",
        "",
        f"A throwaway local PostgreSQL (fsync on, `synchronous_commit = on`); {cluster['calls']} calls per figure.",
        "",
        f"| store | append p50 by session length (a parent id checked each time) | {lengths[-1]:,} / "
        f"{lengths[0]:,} | target |",
        "|---|---|---|---|",
    ]
    for label, costs in cluster["length"].items():
        ratio = costs[str(lengths[-1])] / costs[str(lengths[0])]
        figures = ", ".join(f"{int(k):,}: {v * 1e3:.3f} ms" for k, v in costs.items())
        passed = verdict(targets[f"length_{label}"]["pass"])
        lines.append(f"| {label} | {figures} | **{ratio:.2f}{TIMES}** | {LE} 1.2{TIMES}: {passed} |")
    bare = cluster["bare"]
    lines += [
        "",
        f"PostgresStore.append (in process, one message) p50 {bare['store_p50'] * 1e3:.3f} ms against a bare psycopg "
        f"loop of durable single-row INSERTs on the same database p50 {bare['bare_p50'] * 1e3:.3f} ms, interleaved: "
        f"**{bare['store_p50'] / bare['bare_p50']:.2f}{TIMES}** (target {LE} 1.5{TIMES}: "
        f"{verdict(targets['bare_insert']['pass'])}).",
        "",
        "| servers | append p50, 1 client (through gRPC) | 16 clients: appends/s in all | per node |",
        "|---|---|---|---|",
    ]
    sqlite = cluster["sqlite"]
    for count, run in cluster["nodes"].items():
        per_node = ", ".join(f"{rate:,.0f}" for rate in run["per_node_per_s"])
        p50, total = run["p50"], run["total_per_s"]
        lines.append(
            f"| {count} node(s) on one PostgreSQL | {p50 * 1e3:.3f} ms ({p50 / sqlite['p50']:.2f}{TIMES} SQLite) | "
            f"{total:,.0f} ({total / sqlite['total_per_s']:.2f}{TIMES} SQLite) | {per_node} |"
        )
    lines.append(
        f"| 1 server on SQLite (`synchronous=FULL`) | {sqlite['p50'] * 1e3:.3f} ms | {sqlite['total_per_s']:,.0f} | "
        f"{sqlite['total_per_s']:,.0f} |"
    )
    relay = cluster.get("relay")
    if relay is not None:
        ratio = relay["cross_per_s"] / relay["same_per_s"]
        lines += [
            "",
            f"Live relay: {relay['streams']} `PublishStream` publishers on node 1, a live subscriber per session on "
            f"node 2 (events cross through PostgreSQL, many per `NOTIFY`) {relay['cross_per_s']:,.0f} events/s, "
            f"against subscribers on node 1 itself {relay['same_per_s']:,.0f} events/s: **{ratio:.2f}{TIMES}** "
            f"(target {GE} 0.8{TIMES}: {verdict(targets['relay']['pass'])}).",
        ]
    lines += [
        "",
        "Every node here shares this machine's 2 cores with PostgreSQL and the clients, so more nodes add no "
        "CPU: the figures show that appends through any node keep the same latency and the log stays one log, "
        "not how a cluster of separate machines scales.",
    ]
    return lines


# --- misses -----------------------------------------------------------------------------------


def observability_section(run: dict[str, Any]) -> list[str]:
    labels = {"off": "off", "on": "on, every call sampled", "on_10pct": "on, 10% sampled"}
    lines = [
        "## Observability overhead",
        "",
        f"One client appending, {run['rounds']} rounds of {run['count']} appends per mode, the modes back to back in "
        "each round (order reversed every other round); each mode its own server process, configured only by the "
        "`OTEL_*` environment (spans exported over OTLP/gRPC to a receiver in the benchmark process that keeps the "
        "bytes and counts the spans after the run; `--metrics-port` on). Paired: the median over the rounds of the "
        "mode's p50 over off's p50 in the same round. p50: the lowest of the rounds' p50 (the median of the rounds "
        "beside it); CPU: client + server per append, median of the rounds.",
        "",
        "| store | tracing and metrics | paired vs off | p50 | vs off | median-of-rounds vs off | p99 | CPU per append "
        "| vs off |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for store, rows in run["stores"].items():
        for mode, row in rows.items():
            lines.append(
                f"| {store} | {labels.get(mode, mode)} | {row.get('ratio_paired', row['ratio']):.2f}{TIMES} | "
                f"{fmt_time(row['p50_s'] * 1e9)} | {row['ratio']:.2f}{TIMES} | "
                f"{row['ratio_median']:.2f}{TIMES} | {fmt_time(row['p99_s'] * 1e9)} | {fmt_time(row['cpu_s'] * 1e9)} | "
                f"{row['cpu_ratio']:.2f}{TIMES} |"
            )
    cost = run.get("instrumentation")
    if cost:
        lines += [
            "",
            f"The instrumentation alone, in-process with every span sampled (no network, spans discarded): "
            f"{fmt_time(cost['server_s'] * 1e9)} on the server and {fmt_time(cost['client_s'] * 1e9)} "
            "on the client per call.",
        ]
    spans = run.get("spans", {})
    if spans:
        lines += ["", "Spans the receiver got: " + ", ".join(f"{k} {v}" for k, v in sorted(spans.items())) + "."]
    return lines


def observability_misses(run: dict[str, Any]) -> list[str]:
    missed = [t for t in run["targets"] if not t["pass"]]
    cost = run.get("instrumentation")
    if not missed or not cost:
        return []
    lines = ["### Observability: tracing on vs off", ""]
    # Per traced append: both sides' instrumentation, and two spans (CLIENT and SERVER) encoded for export.
    expected = cost["server_s"] + cost["client_s"] + 2 * cost["encode_s"]
    for store, rows in run["stores"].items():
        off, on = rows["off"]["cpu_s"], rows["on"]["cpu_s"]
        lines.append(
            f"- {store}: an untraced append took {fmt_time(off * 1e9)} of CPU (client + server); the parts of "
            f"tracing timed in-process add {fmt_time(expected * 1e9)} ({expected / off:.0%}); the traced run "
            f"measured {fmt_time((on - off) * 1e9)} more."
        )
    lines += [
        "",
        f"The parts: agentmsg's instrumentation {fmt_time(cost['server_s'] * 1e9)} (server) + "
        f"{fmt_time(cost['client_s'] * 1e9)} (client) per call, and the SDK's OTLP encoding "
        f"{fmt_time(cost['encode_s'] * 1e9)} per span in each process's export thread (with `always_on`, two "
        "spans per append). Those figures come from a tight loop; timed inside the running processes (where "
        "the gRPC and store work between calls leave the caches colder) the same calls cost about three times "
        "as much: roughly 75 µs on the client per sampled call (40 µs unsampled: the span context is made and "
        "sent either way) and 130 µs of the server's loop thread. The rest of a latency difference is the two "
        "processes sharing two cores with that extra CPU and the export threads, and the load of the shared "
        "machine, which the paired rounds cancel only in part.",
        "",
    ]
    return lines


def mcp_section(mcp: dict[str, Any]) -> list[str]:
    concurrency = mcp["concurrency"]
    lines = [
        "## MCP bridge",
        "",
        f"`{mcp['command']}`: {mcp['calls']} calls per figure; p50/p99 with one caller, calls/s with "
        f"{concurrency} concurrent callers. Every server, runner and MCP server in its own process on 127.0.0.1. "
        "Each ratio is agentmsg's figure over MCP's: a latency ratio above 1 is slower, a throughput ratio above "
        "1 is faster.",
        "",
        f"| path | p50 | p99 | calls/s ({concurrency} callers) |",
        "|---|---|---|---|",
    ]
    names = {
        "hosted": (
            "`CallTool` to server-everything `echo` hosted by the server (`agentmsg serve --mcp`)",
            "the SDK's client straight to the same server over stdio (alternating rounds, medians)",
        ),
        "runner": (
            "`CallTool` via `agentmsg mcp runner` to server-everything `echo`",
            "the SDK's client straight to the same server over stdio",
        ),
        "serve": (
            "the SDK's client via `agentmsg mcp serve --http` (a `ToolRunner` behind)",
            "the SDK's client to a plain `MCPServer` (FastMCP) over streamable HTTP",
        ),
    }
    for pair, (ours, theirs) in names.items():
        if pair not in mcp:  # results from before hosted MCP servers
            continue
        rows = [(ours, "agentmsg"), (theirs, "mcp")]
        if "toolrunner" in mcp[pair]:
            rows.append(
                ("`CallTool` to the same `echo` in a Python `ToolRunner` (the agentmsg hops alone)", "toolrunner")
            )
        for label, key in rows:
            row = mcp[pair][key]
            lines.append(f"| {label} | {row['p50_ms']:.3f} ms | {row['p99_ms']:.3f} ms | {row['per_s']:,.0f} |")
        lines.append(
            f"| **{pair}: agentmsg / MCP** | **{mcp[pair]['latency_ratio']:.2f}{TIMES}** | | "
            f"**{mcp[pair]['throughput_ratio']:.2f}{TIMES}** |"
        )
    lines += [
        "",
        "The hosted path adds one hop to a stdio call (engine to agentmsg server over gRPC; the server holds the "
        "MCP session itself). The runner path adds two hops to a stdio call (engine to agentmsg server, server to "
        "runner, both gRPC) and two Python processes; the serve path puts the bridge, the agentmsg server and a "
        "runner where the plain server runs the tool itself. What the hops buy: routing across a cluster, deadlines "
        "and cancellation that reach the MCP server, tokens, and durable sessions.",
    ]
    loops = mcp.get("loops")
    if loops:  # runs from before --loop have none
        lines += [
            "",
            f"Event loops: the agentmsg server {loops['agentmsg']}, the bare relay floor {loops['relay']} (the same "
            f"loop, so the ratio compares the code), the SDK's straight client {loops['straight']} (the user's "
            "process, as it is).",
        ]
    return lines


def profile_table(title: str, profile: dict[str, Any], unit: str, rows: int = 8) -> list[str]:
    lines = [
        f"{title} — {profile['total_us_per_op']:.2f} µs of profiled Python time per {unit}:",
        "",
        f"| own µs / {unit} | cumulative µs | calls / {unit} | function |",
        "|---:|---:|---:|---|",
    ]
    for row in profile["top"][:rows]:
        function = row["function"].replace("|", "\\|")
        lines.append(
            f"| {row['own_us_per_op']:.3f} | {row['cum_us_per_op']:.3f} | {row['calls_per_op']:.2f} | `{function}` |"
        )
    return [*lines, ""]


def _own(profile: dict[str, Any], needle: str) -> float:
    return sum(r["own_us_per_op"] for r in profile["top"] if needle in r["function"])


def codec_misses(codec: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    overheads = {row["payload"]: row for row in codec.get("overheads", [])}
    medians = {(p["name"], r["contender"], r["op"]): r["median_ns"] for p in codec["payloads"] for r in p["results"]}
    for entry in codec.get("profiles", []):
        t = entry["target"]
        lines += [f"### codec / {t['payload']}: {t['text']}", ""]
        if t["against"] != BASELINE:
            peer = medians[t["payload"], t["against"], t["op"]]
            raw = medians[t["payload"], BASELINE, t["op"]]
            wrapper = medians[t["payload"], WRAPPER, t["op"]]
            lines += [
                f"**What bounds it.** Raw generated protobuf is itself only {peer / raw:.1f}{TIMES} faster than "
                f"{t['against']} on {t['op']} in this run ({fmt_time(raw)} vs {fmt_time(peer)}): visiting every "
                "message and block makes upb create a Python object for every message, oneof arm and field "
                "read, which is most of what the peer's eager decode costs too. The wrapper adds "
                f"{wrapper / raw:.2f}{TIMES} on top (a wrapper object per message and per block: "
                "`BaseMessage.contents`, `message_from_proto` and the property reads in the profile below). "
                f"So {PEER_TARGET:g}{TIMES} on this like-for-like measure is out of reach of anything that hands "
                "out upb-backed Python objects; the lazy `decode` alone (the issue's target) is met.",
                "",
            ]
        for name, profile in entry["profiles"].items():
            title = f"`{name}` {t['op']} ({fmt_time(profile['median_ns_unprofiled'])} unprofiled, cProfile)"
            lines += profile_table(title, profile, t["op"])
        if entry.get("probes"):
            lines += [f"The steps of {t['op']}, each timed alone on this payload (median):", ""]
            lines += ["| step | time |", "|---|---:|"]
            lines += [f"| `{p['name']}` | {fmt_time(p['median_ns'])} |" for p in entry["probes"]]
            lines.append("")
        if t["against"] == BASELINE and t["contender"] == WRAPPER and overheads:
            spread = ", ".join(f"{p} {fmt_time(row[t['op']])}" for p, row in overheads.items())
            lines += [
                f"**What bounds it.** The wrapper's time minus raw protobuf's for {t['op']}, per payload: "
                f"{spread}. It does not scale with the payload (127 B to 1 MiB is 8,000 times the bytes; the "
                "1 MiB figure moves by a few µs of run-to-run noise on a 25 to 50 µs operation): it is a per-call "
                "cost, which only the smallest payloads make large next to the work itself."
            ]
            wrapper, raw = entry["profiles"][WRAPPER], entry["profiles"][BASELINE]
            if t["op"] == "encode":
                probe = {p["name"]: p["median_ns"] for p in entry.get("probes", [])}
                keyword = probe.get("pb.SerializeToString(deterministic=False)")
                positional = probe.get("pb.SerializeToString(True) (positional: deterministic, upb)")
                lines.append(
                    f"In the profiles the C serializer itself takes {_own(wrapper, 'SerializeToString'):.3f} µs "
                    f"per call in `Conversation.to_bytes()` against {_own(raw, 'SerializeToString'):.3f} µs raw: "
                    "`to_bytes` passes `deterministic=True` (the contract's idempotent-append guarantee; the "
                    "`Struct` fields hold maps, so it is needed)"
                    + (
                        f", and the steps show the cost is upb's keyword-argument handling, not determinism: "
                        f"`deterministic=False` costs the same ({fmt_time(keyword)}), while the positional "
                        f"`SerializeToString(True)`, which upb also reads as deterministic, takes "
                        f"{fmt_time(positional)}"
                        if keyword and positional
                        else ""
                    )
                    + f". The Python method around it adds {_own(wrapper, '(to_bytes)'):.3f} µs (profiled)."
                )
            elif t["op"] == "decode":
                parse_us = _own(wrapper, "ParseFromString' of")
                probe = {p["name"].split(":")[0]: p["median_ns"] for p in entry.get("probes", [])}
                sketch, raw_probe, current = probe.get("sketch"), probe.get("raw"), probe.get("wrapper")
                lines.append(
                    "In the profiles the parse is the same C call "
                    f"({parse_us:.3f} µs `ParseFromString` vs "
                    f"{_own(raw, 'method FromString'):.3f} µs `FromString`); the rest is Python around it: "
                    f"`from_bytes` {_own(wrapper, '(from_bytes)'):.3f} µs own time (type check, `bytes(data)`, a new "
                    f"message then `ParseFromString`), `from_proto` {_own(wrapper, '(from_proto)'):.3f} µs "
                    f"(a second type check), `_wrap` {_own(wrapper, '(_wrap)'):.3f} µs "
                    "(`cls.__new__` and a slot store)."
                    + (
                        f" Timed alone, the sketch that skips them for `bytes` input without validation "
                        f"(`object.__new__` + `FromString`) takes {fmt_time(sketch)}, "
                        f"{sketch / raw_probe:.2f}{TIMES} the raw call timed the same way "
                        f"({fmt_time(raw_probe)}), against {fmt_time(current)} for `from_bytes`."
                        if sketch and raw_probe and current
                        else ""
                    )
                )
            lines.append("")
    return lines


def conversion_misses(conversion: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for t in conversion["targets"]:
        if t["pass"]:
            continue
        lines += [f"### conversion: {t['text']}", ""]
        for name, profile in conversion.get("profiles", {}).items():
            lines += profile_table(f"`{name}` (cProfile)", profile, "conversion")
    return lines


def service_misses(service: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    missed = {t["name"]: t for t in service["targets"] if not t["pass"]}
    profiles = service.get("profiles", {})
    for name in missed:
        if name.startswith("append_"):
            a = service[name]
            lines += [
                f"### service: {missed[name]['text']}",
                "",
                f"**What bounds it.** CPU per call in this run: the agentmsg server "
                f"{a['server_cpu_ms_per_call'] * 1e3:.0f} µs per append (decode, validate, store, respond) "
                f"against {a['echo_cpu_ms_per_call'] * 1e3:.0f} µs per echo. With {a['clients']} clients in one "
                "client process and the server sharing the cores, calls queue for CPU, so the p50 ratio follows "
                "the ratio of CPU per call plus the client's own work.",
                "",
            ]
            if "append" in profiles:
                lines += profile_table("agentmsg server, AppendMessage", profiles["append"]["server"], "append")
    subscribe_missed = [missed[n] for n in ("subscribe_1", "subscribe_10") if n in missed]
    for t in subscribe_missed:
        subs = 1 if t["name"] == "subscribe_1" else 10
        s = service[t["name"]]
        cores = profiles.get("subscribe", {}).get("cores") or service.get("cores") or 2
        per_msg = s["client_cpu_us_per_msg"] + s["server_cpu_us_per_msg"]
        ceiling = cores / (per_msg * 1e-6)
        needed = subs * 200_000 * per_msg * 1e-6
        if subs == 1:
            lines += [
                f"### service: {t['text']}",
                "",
                f"**What bounds it: the subscriber's CPU.** The one subscriber spent "
                f"{s['client_cpu_us_per_msg']:.2f} µs of CPU per message (receive, decode into `Logged`/wrappers, "
                f"read the blocks), which caps it near {1e6 / s['client_cpu_us_per_msg']:,.0f} messages/s on one "
                f"core; the server spent {s['server_cpu_us_per_msg']:.2f} µs per message. The run got "
                f"{s['min_rate']:,.0f}/s: check the load average above (other processes share the cores).",
                "",
            ]
            continue
        lines += [
            f"### service: {t['text']}",
            "",
            f"**What bounds it: CPU.** Measured in the run itself: each delivered message cost "
            f"{s['client_cpu_us_per_msg']:.2f} µs of CPU in its subscriber process (receive, decode into "
            f"`Logged`/wrappers, read the blocks) and {s['server_cpu_us_per_msg']:.2f} µs in the server "
            f"(read the log, frame the stored bytes, gRPC send), {per_msg:.2f} µs in all. With {subs} "
            f"subscribers and the server sharing {cores} cores, delivery can reach at most {cores} / "
            f"{per_msg:.2f} µs = {ceiling:,.0f} messages/s in all, {ceiling / subs:,.0f}/s per subscriber; the "
            f"run delivered {s['aggregate_rate']:,.0f}/s in all. {subs} x 200k/s would need "
            f"{needed:.1f} cores of CPU at this cost per message, so no per-message saving short of "
            f"{per_msg / (cores / (subs * 200_000) * 1e6):.1f}{TIMES} meets it on this machine (the server's "
            f"share alone would take {subs * 200_000 * s['server_cpu_us_per_msg'] * 1e-6:.1f} cores); with one "
            f"subscriber the same code delivers {service['subscribe_1']['min_rate']:,.0f}/s.",
            "",
        ]
        prof = profiles.get("subscribe")
        if prof:
            lines += [
                f"Profiles of the same {prof['subscribers']}-subscriber run ({prof['messages_each']:,} messages "
                f"each; slowest subscriber {min(prof['profiled_rates']):,.0f} msg/s under the profiler). "
                "`epoll.poll` and `lock.acquire` are waiting, not work: the server's loop waits for the gRPC "
                "threads, the subscriber's main thread waits for the next response.",
                "",
            ]
            lines += profile_table(
                "Server (main thread: the asyncio loop and every handler)", prof["server"], "delivered message"
            )
            lines += profile_table("Subscriber 1 (main thread)", prof["client"], "received message")
    if "image" in missed:
        img = service["image"]
        prof = profiles.get("image")
        lines += [
            f"### service: {missed['image']['text']}",
            "",
            f"**What bounds it.** The transport first: a bare gRPC unary call carrying the same request bytes to "
            f"a handler that does nothing reached {mib(img['bare_grpc_Bps'])} = "
            f"{img['bare_fraction_of_tcp']:.0%} of raw TCP in this run, so 50% of TCP would need agentmsg at "
            f"{0.5 / img['bare_fraction_of_tcp']:.0%} of bare gRPC"
            + (" — more than bare gRPC itself" if img["bare_fraction_of_tcp"] < 0.5 else "")
            + f"; it reached {img['agentmsg_Bps'] / img['bare_grpc_Bps']:.0%}. The server's own work per 1 MiB "
            f"append: {img['server_usage_per_append']['cpu_ms']:.2f} ms of CPU "
            f"({img['server_usage_per_append']['sys_ms']:.2f} ms of it in the kernel) and "
            f"{img['server_usage_per_append']['minflt']:.0f} page faults, against "
            f"{img['bare_server_usage_per_call']['cpu_ms']:.2f} ms "
            f"({img['bare_server_usage_per_call']['sys_ms']:.2f} ms) and "
            f"{img['bare_server_usage_per_call']['minflt']:.0f} for the bare server (256 faults are the 1 MiB "
            "the memory store keeps per append; user/kernel split from 10 ms clock ticks). The request path is "
            "serial (one append at a time), so that CPU is wall time.",
            "",
        ]
        if prof:
            steps = "; ".join(f"{name} {us:,.0f} µs" for name, us in prof["steps_us"].items())
            tuned = prof["malloc_tuned"]
            in_server = prof.get("validate_in_server_us")
            lines += [
                f"Where the server's time goes. The handler's steps on one 1 MiB request, timed in the benchmark "
                f"process with warm caches: {steps}. Validation is the big one and it grows with the bytes "
                "field although the image rule only asks whether `data` is set: protovalidate's native validator "
                "copies the message to evaluate it"
                + (
                    f"; in the server, on freshly received bytes, it took {in_server:,.0f} µs per "
                    "append (profile below)"
                    if in_server
                    else ""
                )
                + ". The rest of the main thread's busy time is `Context.run` (grpc.aio's Cython glue: the "
                "request bytes copied into a Python object and parsed, the response sent), then the store's "
                "deterministic re-encode (`SerializeToString`). A memory-allocator check: with "
                f"`GLIBC_TUNABLES={tuned['tunables']}` in the server (no fresh mmap per large buffer) the append "
                f"ran at {mib(tuned['Bps'])} = {tuned['fraction_of_tcp']:.0%} of TCP, "
                f"{tuned['fraction_of_bare']:.0%} of bare gRPC, server CPU {tuned['server_cpu_ms_per_append']:.2f} "
                "ms per append.",
                "",
            ]
            lines += profile_table(
                "Server main thread during the appends (cProfile; `epoll.poll` is the loop waiting for gRPC's "
                "transport threads, whose copying and HTTP/2 work cProfile cannot see)",
                prof["server"],
                "append",
            )
    return lines


# --- main -------------------------------------------------------------------------------------


def hostile_section(run: dict[str, Any]) -> list[str]:
    """``bench/hostile.py``: the delay one heavy request causes a concurrent small append."""
    process = run.get("process", {})
    in_process = run.get("in_process", {})
    lines = [
        "## Heavy requests (`bench/hostile.py`)",
        "",
        "A probe client appends one small message after another while one big request is served: the slowest of "
        "its appends while the big one was in flight is the delay that request caused every other client. With "
        "the server in the bench's process, a task on the server's event loop measured the loop's longest stall "
        "(the share of the delay that is the loop, not the store's single writer or the transfer).",
        "",
        "| request | status | its time | slowest small append meanwhile | idle median | loop's longest stall |",
        "|---|---|---|---|---|---|",
    ]
    for name, found in process.items():
        stall = in_process.get(name, {}).get("loop_worst_stall_ms")
        worst, idle = found.get("probe_worst_during_ms"), found.get("probe_idle_median_ms")
        lines.append(
            f"| {name} | {found['status']} | {found['request_s'] * 1000:,.0f} ms | "
            f"{f'{worst:,.1f} ms' if worst is not None else DASH} | {f'{idle:.2f} ms' if idle is not None else DASH} | "
            f"{f'{stall:,.1f} ms' if stall is not None else DASH} |"
        )
    return lines


def a2a_section(run: dict[str, Any]) -> list[str]:
    lines = [
        "## A2A",
        "",
        f"{run['payload']} ({run['binary_bytes']:,} bytes as binary A2A messages, {run['protojson_bytes']:,} as "
        "ProtoJSON): agentmsg's converter (`agentmsg.frameworks.a2a`) against a2a-sdk's own serialisation of the "
        "same `Message` objects.",
        "",
        "| operation | median [min" + DASH + "max] | vs the anchor |",
        "|---|---|---|",
    ]
    for case in run["cases"]:
        ratio = f"{case['ratio_vs_anchor']:.2f}{TIMES} {case['anchor']}" if "anchor" in case else "anchor"
        lines.append(
            f"| {case['name']} | {fmt_time(case['median_ns'])} [{fmt_time(case['min_ns'])}{DASH}"
            f"{fmt_time(case['max_ns'])}] | {ratio} |"
        )
    return lines


NAMES = (
    "codec",
    "conversion",
    "frameworks",
    "streaming",
    "service",
    "http",
    "reads",
    "cluster",
    "observability",
    "mcp",
    "a2a",
    "typescript",
    "hostile",
    "group_commit",
    "roundtrip",
    "viewer",
)


def roundtrip_section(run: dict[str, Any]) -> list[str]:
    a, b, m = run["sides"]["agentmsg"], run["sides"]["a2a-grpc"], run["sides"]["agentmsg-memory"]
    (target,) = run["targets"]
    return [
        "## Agent-to-agent round trip against A2A's gRPC binding (`bench/roundtrip_a2a.py`)",
        "",
        "agentmsg: `agentmsg serve` on SQLite (every acknowledged append on disk); one client appends a short text "
        "message, another, already subscribed in its own process, has it: the round trip ends when the subscriber "
        f"has the message. A2A: a2a-sdk {run.get('a2a_sdk', '')}'s gRPC binding in its own process (an agent "
        "answering every `SendMessage` with one fixed message, storing nothing), a2a-sdk's own client sending the "
        "same text and waiting for the reply. Beside them, not in the ratio, the agentmsg round trip on a second "
        "server on the memory store: what the durable commit costs. "
        f"{run['rounds']} interleaved rounds of {run['per_round']} round trips a "
        "side; the ratio is the median of the per-round p50 ratios "
        f"({', '.join(f'{r:.2f}' for r in run['round_ratios'])}). Server CPU is the serving process's per round trip.",
        "",
        "| side | p50 | p99 | server CPU per round trip |",
        "|---|---:|---:|---:|",
        f"| agentmsg: append {ARROW} subscriber sees it (SQLite) | {a['p50_ms']:.2f} ms | {a['p99_ms']:.2f} ms | "
        f"{a['server_cpu_us']:,.0f} µs |",
        f"| agentmsg: the appender's acknowledgement | {a['ack_p50_ms']:.2f} ms | {DASH} | {DASH} |",
        f"| A2A gRPC: `SendMessage` {ARROW} the agent's reply | {b['p50_ms']:.2f} ms | {b['p99_ms']:.2f} ms | "
        f"{b['server_cpu_us']:,.0f} µs |",
        f"| agentmsg on the memory store (not in the ratio) | {m['p50_ms']:.2f} ms | {m['p99_ms']:.2f} ms | "
        f"{m['server_cpu_us']:,.0f} µs |",
        "",
        f"agentmsg / A2A gRPC p50: **{run['ratio']:.2f}{TIMES}** (target {LE} 1.2{TIMES}: {verdict(target['pass'])}).",
    ]


def group_commit_section(run: dict[str, Any]) -> list[str]:
    lines = [
        "## Group commit: concurrent durable appends (`bench/group_commit.py`)",
        "",
        "agentmsg against a bare gRPC server built in the benchmark that answers the same `AppendMessage` with "
        "nothing but a group commit (one writer, one transaction per batch, no checks). Interleaved rounds, "
        "medians; commits per append are each side's transactions (each one log flush); CPU is the server "
        "process's (PostgreSQL's backends not included)."
        + "".join(
            f" {store}: the floor on {loops['floor']}'s event loop, agentmsg on {loops['agentmsg']}'s."
            for store, loops in run.get("loops", {}).items()
        ),
        "",
        "| store | sessions | clients | floor appends/s | agentmsg appends/s | ratio | p50 floor / agentmsg "
        "| commits per append floor / agentmsg | server CPU per append floor / agentmsg |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for store, cells in run["stores"].items():
        for key, c in cells.items():
            mode, clients = key.split("/")
            lines.append(
                f"| {store} | {mode} | {clients} | {c['floor_per_s']:,.0f} | {c['agentmsg_per_s']:,.0f} "
                f"| {c['ratio']:.2f}x | {c['floor_p50_ms']:.2f} / {c['agentmsg_p50_ms']:.2f} ms "
                f"| {c['floor_commits_per_append']:.2f} / {c['agentmsg_commits_per_append']:.2f} "
                f"| {c['floor_cpu_us']:.0f} / {c['agentmsg_cpu_us']:.0f} µs |"
            )
    return lines


def viewer_section(run: dict[str, Any]) -> list[str]:
    paint = run["first_paint"]
    lines = [
        "## The session viewer in Chromium (`bench/viewer.py`)",
        "",
        f"First paint of a {paint['messages']:,}-message session (navigation start to the viewer's "
        f"`agentmsg:first-row` mark, a fresh page each round): median {paint['median_ms']:.0f} ms, max "
        f"{paint['max_ms']:.0f} ms. The `make run` demo's turn with the page open: each event's server-side time "
        "(an append's acknowledgement; a streamed event handed to `publish_stream`) to its row in the DOM "
        "(a MutationObserver); negative: the row was there before the append call returned.",
        "",
        "| event | median | max |",
        "|---|---:|---:|",
    ]
    for name, event in run["live"].items():
        lines.append(f"| {name} | {event['median_ms']:.1f} ms | {event['max_ms']:.1f} ms |")
    return lines


def build(directory: Path, command: str) -> str:
    runs = {name: load(directory, name) for name in NAMES}
    if not any(runs.values()):
        raise SystemExit(f"no benchmark JSON in {directory}")
    lines = header(runs, command)
    targets, missed = targets_section(runs)
    lines += ["", *targets]
    if runs["codec"]:
        lines += ["", *codec_section(runs["codec"])]
        if runs["codec"].get("hot"):
            lines += ["", *hot_section(runs["codec"]["hot"])]
    if runs["conversion"]:
        lines += ["", *conversion_section(runs["conversion"])]
    if runs["frameworks"]:
        lines += ["", *frameworks_section(runs["frameworks"])]
    if runs["streaming"]:
        lines += ["", *streaming_section(runs["streaming"])]
    if runs["service"]:
        lines += ["", *service_section(runs["service"])]
    if runs["http"]:
        lines += ["", *http_section(runs["http"])]
    if runs["reads"]:
        lines += ["", *reads_section(runs["reads"])]
    if runs["cluster"]:
        lines += ["", *cluster_section(runs["cluster"])]
    if runs["observability"]:
        lines += ["", *observability_section(runs["observability"])]
    if runs["mcp"]:
        lines += ["", *mcp_section(runs["mcp"])]
    if runs["a2a"]:
        lines += ["", *a2a_section(runs["a2a"])]
    if runs["typescript"]:
        lines += ["", *typescript_section(runs["typescript"])]
    if runs["hostile"]:
        lines += ["", *hostile_section(runs["hostile"])]
    if runs["group_commit"]:
        lines += ["", *group_commit_section(runs["group_commit"])]
    if runs["roundtrip"]:
        lines += ["", *roundtrip_section(runs["roundtrip"])]
    if runs["viewer"]:
        lines += ["", *viewer_section(runs["viewer"])]
    if missed:
        lines += [
            "",
            "## Misses: profiles and what bounds them",
            "",
            "cProfile adds a fixed cost to every Python call, so profiled times are larger than the unprofiled "
            "medians; the split between functions is what they show.",
            "",
        ]
        if runs["codec"]:
            lines += codec_misses(runs["codec"])
        if runs["conversion"]:
            lines += conversion_misses(runs["conversion"])
        if runs["service"]:
            lines += service_misses(runs["service"])
        if runs["http"] and not all(t["pass"] for t in runs["http"]["targets"]):
            lines += [
                "### gRPC and Connect",
                "",
                "`bench/connect_http.py` does not profile its misses: run it under cProfile to see where a Connect "
                "call's time goes.",
                "",
            ]
        if runs["observability"]:
            lines += observability_misses(runs["observability"])
        if runs["roundtrip"] and not all(t["pass"] for t in runs["roundtrip"]["targets"]):
            sides = runs["roundtrip"]["sides"]
            lines += [
                "### Durable round trip",
                "",
                "`bench/roundtrip_a2a.py` does not profile its misses. In the same rounds, the round trip was "
                f"{sides['agentmsg']['p50_ms']:.2f} ms p50 on SQLite and {sides['agentmsg-memory']['p50_ms']:.2f} ms "
                f"on the memory store, A2A gRPC {sides['a2a-grpc']['p50_ms']:.2f} ms: the difference between the "
                "first two is the durable commit (a WAL fsync) that A2A, storing nothing, does not make.",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("directory", type=Path, help="where the scripts wrote codec.json, service.json, ...")
    parser.add_argument("-o", "--output", type=Path, default=Path(__file__).resolve().parent / "results.md")
    parser.add_argument("--command", default="make bench", help="the command that ran the benchmarks")
    args = parser.parse_args(argv)
    args.output.write_text(build(args.directory, args.command))
    print(f"results written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
