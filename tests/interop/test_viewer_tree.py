"""The session viewer's tree in Chromium: a branched and compacted session written by the Python ``Session`` renders
the same tree and the same paths as ``Session`` gives, "what the model sees" for a branch's leaf equals
``Session.build_context``, usage sums per path equal sums made in Python, and the tools panel lists a real runner.

Fixtures (the browser, the service on port 0) come from ``test_viewer.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from typing import Any

from test_browser import WAIT_MS, Service
from test_viewer import SHOTS, _open, _shot, chromium, service  # noqa: F401 - the module's fixtures

from agentmsg import AssistantMessage, ToolMessage, UserMessage
from agentmsg.content import ToolCallContent
from agentmsg.messages import AgentMessage
from agentmsg.service import RUN_METADATA_KEY, Client
from agentmsg.sessions import Session
from agentmsg.usage import Usage, UsageCost

BIG = {"width": 1500, "height": 2400}  # every row of these small sessions inside the virtual list's window


def _branched(running: Service) -> tuple[str, Session, dict[str, str]]:
    """A session with three tips: a branch left with a summary, a fork without one, and a compaction after it."""
    session = Session(session_id=f"tree-{uuid.uuid4().hex[:8]}")
    ids: dict[str, str] = {}
    ids["u1"] = session.append(UserMessage.text("Plan a trip to Lyon")).id
    ids["a1"] = session.append(
        AssistantMessage.text(
            "By train or by car?",
            usage=Usage(10, 5, cache_read_tokens=2, cost=UsageCost(input=0.001, output=0.0005, total=0.0015)),
        )
    ).id
    ids["u2"] = session.append(UserMessage.text("By car")).id
    ids["a2"] = session.append(
        AssistantMessage.text("Take the A6.", usage=Usage(20, 0, cache_write_tokens=7, cost=UsageCost(total=0.002)))
    ).id
    left = session.branch(ids["a1"], summary="The user first asked for the car route (the A6).")
    assert left is not None
    ids["bs"] = left.id
    ids["u3"] = session.append(UserMessage.text("By train, then")).id
    ids["a3"] = session.append(AssistantMessage.text("The TGV from Paris takes two hours.")).id  # no usage
    session.branch(ids["u3"])  # a fork without a summary
    ids["a3b"] = session.append(
        AssistantMessage.text("Trains leave Gare de Lyon hourly.", usage=Usage(30, 12, cost=UsageCost(total=0.003)))
    ).id
    ids["u4"] = session.append(UserMessage.text("Book the 9:00")).id
    ids["c"] = session.compact(
        "Trip to Lyon by train, from Gare de Lyon.", first_kept_id=ids["u4"], tokens_before=840
    ).id
    ids["a4"] = session.append(AssistantMessage.text("Booked.", usage=Usage(4, 1))).id
    with Client(running.target) as client:
        for entry in session:
            client.append(session.session_id, entry)
    return session.session_id, session, ids


def _python_branches(session: Session) -> list[dict[str, Any]]:
    """The tree as the viewer draws it, from ``Session.children``: runs of single children, depth first."""
    out: list[dict[str, Any]] = []

    def grow(start: AgentMessage, parent: str | None) -> None:
        run = [start.id]
        kids = session.children(start.id)
        while len(kids) == 1:
            run.append(kids[0].id)
            kids = session.children(kids[0].id)
        out.append(
            {
                "ids": run,
                "parent": parent,
                "branchPoint": run[-1] if len(kids) > 1 else None,
                "tip": run[-1] if not kids else None,
            }
        )
        if len(kids) > 1:
            for kid in kids:
                grow(kid, run[-1])

    for root in session.children(None):
        grow(root, None)
    return out


BRANCHES_JS = (
    "() => [...document.querySelectorAll('aside.tree li.branch')].map((li) => ({ids: li.dataset.ids.split(' '),"
    " parent: li.dataset.parent ?? null, branchPoint: li.dataset.branchPoint ?? null, tip: li.dataset.tip ?? null}))"
)
SHOWN_JS = "() => [...document.querySelectorAll('#messages article.msg')].map((a) => a.dataset.id)"


def _wait_shown(page: Any, ids: list[str]) -> None:
    """Wait until the message list shows exactly these entries, in this order."""
    page.wait_for_function(
        f"(want) => JSON.stringify(({SHOWN_JS})()) === JSON.stringify(want)", arg=ids, timeout=WAIT_MS
    )


def _path_usage(session: Session, leaf: str) -> dict[str, Any]:
    """Usage summed in Python over the assistant messages on the path to ``leaf``: what was reported, and gaps."""
    sums: dict[str, Any] = {"messages": 0, "unreported": 0}
    for entry in session.path(leaf):
        if not isinstance(entry, AssistantMessage):
            continue
        sums["messages"] += 1
        usage = entry.usage
        if usage is None:
            sums["unreported"] += 1
            continue
        # known(): None when not reported (the plain properties read 0 for that)
        counts = {
            "in": usage.known("input_tokens"),
            "out": usage.known("output_tokens"),
            "cacheRead": usage.known("cache_read_tokens"),
            "cacheWrite": usage.known("cache_write_tokens"),
        }
        cost = usage.cost
        if cost is not None:
            counts |= {
                "cost": cost.known("total"),
                "costInput": cost.known("input"),
                "costOutput": cost.known("output"),
                "costCacheRead": cost.known("cache_read"),
                "costCacheWrite": cost.known("cache_write"),
            }
        for key, value in counts.items():
            if value is not None:
                sums[key] = sums.get(key, 0) + value
    return sums


def _shown_usage(page: Any, tip: str) -> dict[str, Any]:
    data = page.evaluate(
        '(tip) => ({...document.querySelector(`aside.tree li.branch[data-tip="${tip}"] .path-usage`).dataset})', tip
    )
    return {
        key: int(value) if key in ("messages", "unreported", "in", "out", "cacheRead", "cacheWrite") else float(value)
        for key, value in data.items()
    }


def test_a_branched_and_compacted_session_renders_the_same_tree_and_paths_as_python(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    session_id, session, ids = _branched(service)
    expected = _python_branches(session)
    assert [b["branchPoint"] for b in expected if b["branchPoint"]] == [ids["a1"], ids["u3"]]  # the fixture forks
    with Client(service.target) as client:  # the session as read back from the service's log
        reread = Session([logged.message for logged in client.history(session_id)], session_id=session_id)
    assert _python_branches(reread) == expected
    page = _open(chromium, service, session_id)
    page.set_viewport_size(BIG)
    try:
        page.wait_for_selector("aside.tree li.branch[data-tip]", timeout=WAIT_MS)  # a branched session opens it
        assert page.evaluate(BRANCHES_JS) == expected
        # The list shows the path to the current leaf: the last entry, as Session takes it.
        default = [e.id for e in session.path(reread.leaf_id)]
        _wait_shown(page, default)
        assert page.evaluate(SHOWN_JS) == default
        current = page.locator("aside.tree li.branch.chosen")
        assert current.get_attribute("data-tip") == ids["a4"] == session.leaf_id
        # The left branch carries its summary; the compaction says what it keeps.
        left = page.locator(f'aside.tree li.branch[data-tip="{ids["a2"]}"] .left-summary')
        assert left.get_attribute("data-summary") == ids["bs"]
        assert "The user first asked for the car route" in left.inner_text()
        compaction = page.locator(f'aside.tree .compaction[data-id="{ids["c"]}"]')
        assert compaction.get_attribute("data-first-kept") == ids["u4"]
        assert "keeps from #9" in compaction.inner_text()
        assert "840 tokens before" in compaction.inner_text()
        summary = page.locator(f'aside.tree .branch-summary[data-id="{ids["bs"]}"]')
        assert summary.get_attribute("data-from") == ids["a2"]
        # Choosing another tip shows its path.
        for tip in ("a2", "a3"):
            page.locator(f'aside.tree li.branch[data-tip="{ids[tip]}"] button.choose').click()
            path = [e.id for e in session.path(ids[tip])]
            _wait_shown(page, path)
            assert page.locator("aside.tree li.branch.chosen").get_attribute("data-tip") == ids[tip]
        _shot(page, "tree")
        page.locator("aside.tree button.follow").click()
        _wait_shown(page, default)
        SHOTS.mkdir(parents=True, exist_ok=True)  # the README's picture: the top of the page
        page.screenshot(path=str(SHOTS / "tree-top.png"), clip={"x": 0, "y": 0, "width": 1500, "height": 800})
        assert page.problems == []
    finally:
        page.close()


def _role(message: AgentMessage) -> str:
    return type(message).__name__.removesuffix("Message").lower()


def test_what_the_model_sees_from_a_branch_leaf_equals_python_build_context(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    session_id, session, ids = _branched(service)
    page = _open(chromium, service, session_id)
    page.set_viewport_size(BIG)
    try:
        page.wait_for_selector("aside.tree li.branch[data-tip]", timeout=WAIT_MS)
        for tip in ("a3", "a4", "a2"):  # a fork's leaf; after the compaction; the branch that was left
            expected = [(m.id, _role(m)) for m in session.build_context(ids[tip])]
            with Client(service.target) as client:  # the server's BuildContext agrees with the Session's
                assert [(m.id, _role(m)) for m in client.build_context(session_id, leaf=ids[tip])] == expected
            page.locator(f'aside.tree li.branch[data-tip="{ids[tip]}"] button.ctx').click()
            page.wait_for_function(
                "(n) => document.querySelectorAll('aside.context article.msg').length === n"
                " && document.querySelector('aside.context p.muted')?.textContent.includes(' to #')",
                arg=len(expected),
                timeout=WAIT_MS,
            )
            page.wait_for_function(
                "(first) => document.querySelector('aside.context article.msg')?.dataset.id === first",
                arg=expected[0][0],
                timeout=WAIT_MS,
            )
            shown = page.evaluate(
                "() => [...document.querySelectorAll('aside.context article.msg')].map((a) => [a.dataset.id,"
                " [...a.classList].find((c) => c.startsWith('role-')).slice(5)])"
            )
            assert [tuple(item) for item in shown] == expected
            if tip == "a4":  # after the compaction: its summary first, then the kept entry, then what followed
                assert [m for m, _ in expected] == [ids["c"], ids["u4"], ids["a4"]]
                assert "Trip to Lyon by train" in page.locator("aside.context article.msg").first.inner_text()
                _shot(page, "tree-context")
        assert page.problems == []
    finally:
        page.close()


def test_usage_and_cost_per_branch_equal_sums_made_in_python(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    session_id, session, ids = _branched(service)
    page = _open(chromium, service, session_id)
    try:
        page.wait_for_selector(f'aside.tree li.branch[data-tip="{ids["a4"]}"] .path-usage', timeout=WAIT_MS)
        for tip in ("a2", "a3", "a4"):
            assert _shown_usage(page, ids[tip]) == _path_usage(session, ids[tip]), tip
        # The path to a3 has an assistant message without usage: counted apart, and its "out" is a real 0 elsewhere.
        a3 = page.locator(f'aside.tree li.branch[data-tip="{ids["a3"]}"] .path-usage').inner_text()
        assert "1 without usage" in a3
        assert "cache write not reported" in a3
        a2 = page.locator(f'aside.tree li.branch[data-tip="{ids["a2"]}"] .path-usage').inner_text()
        assert "out 5" in a2
        assert "cache write 7" in a2
        a4 = _path_usage(session, ids["a4"])
        assert a4["unreported"] == 0
        assert "cacheWrite" not in a4
        assert (
            "cache write not reported"
            in page.locator(f'aside.tree li.branch[data-tip="{ids["a4"]}"] .path-usage').inner_text()
        )
        assert page.problems == []
    finally:
        page.close()


def _tools_now(running: Service) -> list[tuple[str, str]]:
    with Client(running.target) as client:
        return [(t.tool.name, t.runner_name) for t in client.list_tools()]


def _until(condition: Any, what: str) -> None:
    """Poll ``condition`` (bounded in count and time) until it holds."""
    for _ in range(600):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen")


def test_a_tool_result_shows_the_latency_and_runner_recorded_by_call_tool(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    runner = subprocess.Popen(  # the demo's tool runner
        [sys.executable, "-m", "agentmsg.service.demo", "runner", service.target],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = None
    try:
        _until(lambda: ("get_weather", "weather-runner") in _tools_now(service), "the runner's registration")
        session_id = f"run-{uuid.uuid4().hex[:8]}"
        call = ToolCallContent("call-1", "get_weather", {"city": "Paris"})
        with Client(service.target) as client:
            client.append(session_id, UserMessage.text("Weather in Paris?"))
            client.append(session_id, AssistantMessage([call], stop_reason="tool_calls"))
            result = client.call_tool(call)  # as an engine does: the result as CallTool gave it, then logged
            client.append(session_id, ToolMessage.from_result(result))
        run = result.metadata[RUN_METADATA_KEY]
        page = _open(chromium, service, session_id)
        shown = page.locator(".tool-call .tool-result .run")
        shown.wait_for(timeout=WAIT_MS)
        assert float(shown.get_attribute("data-latency-ms")) == run["latency_ms"]
        assert shown.get_attribute("data-runner") == "weather-runner" == run["runner"]
        assert shown.get_attribute("data-runner-id") == run["runner_id"]
        assert shown.inner_text().strip().endswith("ms by weather-runner")
        assert page.problems == []
    finally:
        if page is not None:
            page.close()
        runner.terminate()
        runner.wait(30)


def test_the_tools_panel_lists_the_runners_connected_now(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    runner = subprocess.Popen(  # the demo's tool runner, a real one, as `make run` starts it
        [sys.executable, "-m", "agentmsg.service.demo", "runner", service.target],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = None
    try:
        _until(lambda: ("get_weather", "weather-runner") in _tools_now(service), "the runner's registration")
        with Client(service.target) as client:
            registered = {t.tool.name: t for t in client.list_tools()}["get_weather"]
        page = _open(chromium, service, f"tools-{uuid.uuid4().hex[:8]}")
        page.locator("button.tools-toggle").click()
        row = page.locator('section.tools tr.tool[data-name="get_weather"]')
        row.wait_for(timeout=WAIT_MS)
        assert row.get_attribute("data-kind") == "web"
        assert row.get_attribute("data-runner") == "weather-runner"
        assert row.get_attribute("data-runner-id") == registered.runner_id
        assert "weather-runner" in row.locator("td.runner").inner_text()
        _shot(page, "tools")
        # The runner goes away: the refresh button asks again.
        runner.terminate()
        runner.wait(30)
        _until(lambda: not any(name == "get_weather" for name, _ in _tools_now(service)), "the runner's leaving")
        page.locator("section.tools button.refresh").click()
        page.wait_for_function(
            "() => !document.querySelector('section.tools tr.tool[data-name=\"get_weather\"]')"
            " && document.querySelector('section.tools .tools-body p')?.textContent.startsWith('no runner')",
            timeout=WAIT_MS,
        )
        assert [p for p in page.problems if "ListMessages" not in p and "status of 404" not in p] == []
    finally:
        if page is not None:
            page.close()
        if runner.poll() is None:
            runner.terminate()
            runner.wait(30)


def test_pages_read_out_of_order_give_the_tree_and_current_leaf_python_gives(
    chromium: Any,  # noqa: F811
    service: Service,  # noqa: F811
) -> None:
    """A page of the log is read when one of its rows is drawn, so pages come in any order (here the first, the
    last, then the middle one): an entry without a parent id waits for the entry before it, and once every page is
    read the tree is ``Session``'s, and the current leaf its last entry."""
    session = Session(session_id=f"tree-pages-{uuid.uuid4().hex[:8]}")
    session.append(UserMessage.text("Start"))
    a1 = session.append(AssistantMessage.text("First answer")).id
    session.append(UserMessage.text("A question left behind"))
    left = session.append(AssistantMessage.text("Its answer")).id
    session.branch(a1, summary="The first try, left.")
    for n in range(450):  # the main line: 455 entries in all, three pages of 200
        session.append(UserMessage.text(f"line {n}") if n % 2 == 0 else AssistantMessage.text(f"answer {n}"))
    entries = list(session)
    assert sum(1 for e in entries if not e.parent_id) > 400  # most follow the entry before them
    with Client(service.target) as client:
        client.append_many(session.session_id, entries)
        reread = Session(
            [logged.message for logged in client.history(session.session_id)], session_id=session.session_id
        )
    last = entries[-1].id
    assert reread.leaf_id == last
    expected = _python_branches(reread)
    assert [b["branchPoint"] for b in expected if b["branchPoint"]] == [a1]
    chosen = "aside.tree li.branch.chosen"
    page = _open(chromium, service, f"{session.session_id}/1")  # the first page
    try:
        page.wait_for_selector("aside.tree li.branch[data-tip]", timeout=WAIT_MS)  # it branches at #2: opened
        page.evaluate("(id) => { location.hash = `#/sessions/${id}/455`; }", session.session_id)  # the last page
        page.wait_for_function(
            "(want) => document.querySelector('aside.tree li.branch.chosen')?.dataset.tip === want",
            arg=last,
            timeout=WAIT_MS,
        )
        # Entries #401-#455 wait for #400: drawn as a branch from an entry not read yet.
        partial = page.evaluate(BRANCHES_JS)
        assert {"ids": [e.id for e in entries[400:]], "parent": None, "branchPoint": None, "tip": last} in partial
        page.evaluate("(id) => { location.hash = `#/sessions/${id}/300`; }", session.session_id)  # the middle page
        page.wait_for_function(
            "(n) => document.querySelector('aside.tree .tree-body > p.muted')?.textContent === `${n} entries read`",
            arg=len(entries),
            timeout=WAIT_MS,
        )
        page.wait_for_function(
            f"(want) => JSON.stringify(({BRANCHES_JS})()) === JSON.stringify(want)", arg=expected, timeout=WAIT_MS
        )
        assert page.locator(chosen).get_attribute("data-tip") == last
        # The middle page's rows are on the path to the current leaf: drawn, not empty.
        page.wait_for_selector(f'#messages article.msg[data-id="{entries[299].id}"]', timeout=WAIT_MS)
        assert set(page.evaluate(SHOWN_JS)) <= {e.id for e in reread.path(last)}
        # A deep link to an entry of the branch that was left shows the path to it.
        page.evaluate("(id) => { location.hash = `#/sessions/${id}/3`; }", session.session_id)
        page.wait_for_function(
            "(want) => document.querySelector('aside.tree li.branch.chosen')?.dataset.tip === want",
            arg=left,
            timeout=WAIT_MS,
        )
        _wait_shown(page, [e.id for e in reread.path(left)])
        assert page.problems == []
    finally:
        page.close()
