"""Without the ``otel`` extra nothing changes: the service runs as before, and ``--metrics-port`` says what is missing.

The extra is installed in the dev environment, so a child process hides it (an import hook that
refuses ``opentelemetry`` and ``prometheus_client``) and runs a server, a runner and a client in it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import asyncio, sys

    class Hide:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("opentelemetry", "prometheus_client"):
                raise ImportError(f"{name} is hidden")
            return None

    sys.meta_path.insert(0, Hide())

    import agentmsg as am
    from agentmsg.service import AsyncClient, ServerConfig, ToolRunner, create_server, telemetry

    assert not telemetry.AVAILABLE
    assert not telemetry.configure_tracing()

    async def main():
        try:
            await create_server(ServerConfig(db=None, metrics_port=0))
        except am.ValidationError as exc:
            print("metrics:", exc.violations[0].field, exc.violations[0].message)
        running = await create_server(ServerConfig(db=None))
        assert running.telemetry is None and running.metrics_port is None
        target = f"127.0.0.1:{running.port}"
        runner = ToolRunner(target)

        @runner.tool
        def echo(text: str) -> str:
            return text

        serving = asyncio.ensure_future(runner.serve())
        await runner.registered.wait()
        async with AsyncClient(target) as client:
            print("offset", await client.append("s", am.UserMessage.text("hi")))
            print("result", (await client.call_tool(am.ToolCallContent("c", "echo", {"text": "ok"}))).text)
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)
        await running.stop(0)

    asyncio.run(main())
    print("no otel module loaded:", not any(m.startswith(("opentelemetry", "prometheus_client")) for m in sys.modules))
    """
)


def test_the_service_runs_without_the_extra() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "metrics: metrics_port metrics need the otel extra: pip install 'agentmsg[otel]'",
        "offset 1",
        "result ok",
        "no otel module loaded: True",
    ]
