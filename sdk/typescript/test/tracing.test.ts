// Tracing a runner's calls: the result as the GenAI conventions' tool_call_response, the capture setting, and the
// span a call makes with no OpenTelemetry SDK registered (none: the API is a no-op and the result passes through).
// The spans in a real trace are checked across processes by tests/interop/test_ts_sdk.py.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CAPTURE_ENV,
  contentCapture,
  document,
  image,
  otelResponse,
  providerContent,
  text,
  toolCall,
  toolResult,
  traceToolCall,
} from "../src/index.js";

function resultOf(content: ReturnType<typeof toolResult>) {
  if (content.kind.case !== "toolResult") throw new Error("not a result");
  return content.kind.value;
}

test("a text-only result is its text; a mixed one the conventions' parts", () => {
  assert.equal(otelResponse(resultOf(toolResult("c1", [text("sleet "), text("in Oslo")]))), "sleet in Oslo");
  const mixed = resultOf(
    toolResult("c2", [
      text("chart:"),
      image({ data: new Uint8Array([137, 80, 78, 71]), mediaType: "image/png" }),
      document({ url: "https://example.com/a.pdf", mediaType: "application/pdf" }),
      image({ fileId: "file-9" }),
      providerContent("anthropic", "tool_reference", '{"type":"tool_reference","tool_name":"x"}'),
    ]),
  );
  assert.deepEqual(otelResponse(mixed), [
    { type: "text", content: "chart:" },
    { type: "blob", modality: "image", mime_type: "image/png", content: "iVBORw==" },
    { type: "uri", modality: "document", mime_type: "application/pdf", uri: "https://example.com/a.pdf" },
    { type: "file", modality: "image", mime_type: null, file_id: "file-9" },
    { type: "provider", provider: "anthropic", block: { type: "tool_reference", tool_name: "x" } },
  ]);
  assert.equal(otelResponse(resultOf(toolResult("c3", []))), "");
});

test("content capture is off unless the conventions' setting turns it on", () => {
  const before = process.env[CAPTURE_ENV];
  try {
    delete process.env[CAPTURE_ENV];
    assert.equal(contentCapture(), false);
    for (const on of ["true", "1", " SPAN_ONLY ", "span_and_event"]) {
      process.env[CAPTURE_ENV] = on;
      assert.equal(contentCapture(), true, on);
    }
    for (const off of ["false", "0", "no_content", ""]) {
      process.env[CAPTURE_ENV] = off;
      assert.equal(contentCapture(), false, off);
    }
  } finally {
    if (before === undefined) delete process.env[CAPTURE_ENV];
    else process.env[CAPTURE_ENV] = before;
  }
});

test("with no SDK registered a traced call runs as it would untraced", async () => {
  const call = toolCall("c4", "weather", { city: "Oslo" });
  if (call.kind.case !== "toolCall") throw new Error("not a call");
  const answer = resultOf(toolResult("c4", "sleet"));
  const carrier = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01" };
  assert.equal(await traceToolCall(call.kind.value, carrier, async () => answer), answer);
  await assert.rejects(
    traceToolCall(call.kind.value, {}, async () => {
      throw new RangeError("no");
    }),
    RangeError,
  );
});
