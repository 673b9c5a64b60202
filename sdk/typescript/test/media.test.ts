// The media and shortcut vectors (tests/vectors/helpers/) through the SDK: the blocks image(), audio(), document(),
// textDocument() and the seed-1 dict import (contentFromDict) make from real small files, base64, data URLs, URLs and unknown bytes, and what the citation and
// hosted-tool shortcuts build, must be what the files say, as tests/test_media_vectors.py checks for Python.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import type { DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import {
  asKind,
  audio,
  codeExecutionOutput,
  contentFromDict,
  decodeBase64,
  document,
  documentCitation,
  encodeBase64,
  encodeJson,
  fileCitation,
  guessFromPath,
  hostedToolCall,
  hostedToolResult,
  image,
  imageSize,
  MediaError,
  type MediaInput,
  parseDataUrl,
  providerContent,
  registry,
  searchResult,
  searchResultCitation,
  sniffAudio,
  sniffDocument,
  sniffImage,
  textDocument,
  ValidationError,
  webCitation,
  webFetchOutput,
} from "../src/index.js";
import { VECTORS } from "./paths.js";

type Expect =
  | { json: JsonValue }
  | { error: "MediaError"; message: string }
  | { error: "ValidationError"; violations: { field: string; rule_id: string }[] };

interface InputSpec {
  dict?: JsonValue;
  file?: string | null;
  text?: string;
  list?: InputSpec[];
}

interface MediaCase {
  name: string;
  make: "image" | "audio" | "document" | "text_document" | "dict";
  input: InputSpec;
  options: Record<string, string>;
  expect: Expect;
}

interface Call {
  call: string;
  args: JsonValue[];
  kwargs: Record<string, JsonValue>;
}

interface ShortcutCase extends Call {
  name: string;
  type: string;
  expect: Expect;
}

const HELPERS = path.join(VECTORS, "helpers");
const media = JSON.parse(fs.readFileSync(path.join(HELPERS, "media.json"), "utf8")) as {
  files: Record<string, string>;
  cases: MediaCase[];
};
const shortcuts = JSON.parse(fs.readFileSync(path.join(HELPERS, "shortcuts.json"), "utf8")) as {
  cases: ShortcutCase[];
};
const files = Object.fromEntries(Object.entries(media.files).map(([name, text]) => [name, decodeBase64(text, name)]));

function mediaInput(spec: InputSpec): MediaInput | MediaInput[] | JsonValue {
  if (spec.dict !== undefined) return spec.dict;
  if (spec.list !== undefined) return spec.list.map((item) => mediaInput(item) as MediaInput);
  if (spec.file !== undefined) return spec.file === null ? new Uint8Array() : (files[spec.file] as Uint8Array);
  return spec.text as string;
}

/** Python's keyword names as the SDK's options: `media_type` is `mediaType`. */
function camel(kwargs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(kwargs).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c) => c.toUpperCase()), v]),
  );
}

function outcome(make: () => Message, expect: Expect): Expect {
  try {
    const made = make();
    const schema = registry.getMessage(made.$typeName) as DescMessage;
    return { json: encodeJson(schema, made) };
  } catch (error) {
    if (error instanceof MediaError) {
      const length = "message" in expect ? expect.message.length : 0;
      return { error: "MediaError", message: error.message.slice(0, length) };
    }
    if (error instanceof ValidationError) {
      return {
        error: "ValidationError",
        violations: error.violations.map((v) => ({ field: v.field, rule_id: v.ruleId })),
      };
    }
    throw error;
  }
}

for (const c of media.cases) {
  test(`media vector ${c.name}`, () => {
    const input = mediaInput(c.input) as MediaInput | MediaInput[];
    const options = camel(c.options);
    const make = (): Message => {
      switch (c.make) {
        case "image":
          return image(input, options);
        case "audio":
          return audio(input, options);
        case "document":
          return document(input as Uint8Array | string, options);
        case "text_document":
          return textDocument(input as string, options);
        case "dict":
          return contentFromDict(input as JsonValue);
      }
    };
    assert.deepEqual(outcome(make, c.expect), c.expect);
  });
}

// The shortcuts by the vectors' (Python's) names; positional arguments as Python takes them.
const CALLS: Record<string, (args: unknown[], kw: Record<string, unknown>) => unknown> = {
  "citation.web": ([url, title], kw) => webCitation(url as string, title as string | undefined, camel(kw)),
  "citation.document": ([index], kw) => documentCitation(index as number, camel(kw)),
  "citation.search_result": ([source], kw) => searchResultCitation(source as string, camel(kw)),
  "citation.file": ([fileId], kw) => fileCitation(fileId as string, camel(kw)),
  search_result: ([url, title, snippet], kw) =>
    searchResult(url as string, title as string, snippet as string, camel(kw)),
  code_execution_output: ([stdout, stderr, code], kw) =>
    codeExecutionOutput(stdout as string, stderr as string, code as number | undefined, camel(kw)),
  code_execution_file: (_, kw) => camel(kw),
  web_fetch_output: ([url, retrievedAt], _) => webFetchOutput(url as string, retrievedAt as string | undefined),
  provider_content: ([provider, type, json]) => providerContent(provider as string, type as string, json as string),
  hosted_tool_call: ([id, name], kw) => hostedToolCall(id as string, name as string, camel(kw)),
  hosted_tool_result: ([callId, content], kw) => {
    // Python's flat keywords, as the SDK's grouped options: search_results + queries, error_code + error_message.
    const { search_results, queries, error_code, error_message, ...rest } = kw;
    const options = camel(rest);
    if (search_results !== undefined || queries !== undefined) {
      options.searchResults = { results: search_results, queries };
    }
    if (error_code !== undefined || error_message !== undefined) {
      options.error = { code: error_code, message: error_message };
    }
    return hostedToolResult(callId as string, content as string | undefined, options);
  },
};

function evaluate(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(evaluate);
  if (typeof value === "object" && value !== null && "call" in value) {
    const call = value as Call;
    const kwargs = Object.fromEntries(Object.entries(call.kwargs ?? {}).map(([k, v]) => [k, evaluate(v)]));
    const found = CALLS[call.call];
    assert.ok(found, `no shortcut for ${call.call}`);
    return found(call.args.map(evaluate), kwargs);
  }
  return value;
}

for (const c of shortcuts.cases) {
  test(`shortcut vector ${c.name}`, () => {
    const made = outcome(() => evaluate(c) as Message, c.expect);
    assert.deepEqual(made, c.expect);
    if ("json" in made) assert.equal((evaluate(c) as Message).$typeName, c.type);
  });
}

test("base64 round-trips every byte value and refuses what Python refuses", () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let cut = 0; cut < 4; cut++) {
    const bytes = all.subarray(cut);
    assert.deepEqual(decodeBase64(encodeBase64(bytes), "x"), bytes);
  }
  assert.deepEqual(decodeBase64("YR==", "x"), new Uint8Array([0x61]), "non-zero trailing bits are read as Python does");
  assert.deepEqual(decodeBase64(" Y Q\t=\r\n= ", "x"), new Uint8Array([0x61]), "ASCII whitespace is skipped");
  for (const bad of ["YQ", "YQ=", "Y", "YQ==YQ==", "YQ=a", "Y-Q=", "", "YQ\u00a0==", "\n"]) {
    assert.throws(() => decodeBase64(bad, "x"), MediaError, bad);
  }
});

test("the sniffers, the header sizes and the path guess are exported and browser-safe", () => {
  assert.equal(sniffImage(files.png as Uint8Array), "image/png");
  assert.equal(sniffImage(new Uint8Array([0xff, 0xd8])), undefined, "two bytes of a JPEG marker are not a JPEG");
  assert.equal(sniffAudio(new Uint8Array()), "audio/mpeg");
  const sizes = ["png", "jpeg", "gif", "webp", "webp_lossless", "webp_alpha", "png_bomb"].map((name) =>
    imageSize(files[name] as Uint8Array),
  );
  assert.deepEqual(sizes, [
    [2, 2],
    [2, 2],
    [2, 2],
    [2, 2],
    [3, 5],
    [7, 2],
    [10000, 10000],
  ]);
  assert.equal(imageSize((files.png as Uint8Array).subarray(0, 20)), undefined, "a cut header declares no size");
  assert.equal(imageSize((files.jpeg as Uint8Array).subarray(0, 100)), undefined, "no frame header before the cut");
  assert.equal(imageSize(files.unknown as Uint8Array), undefined);
  assert.equal(sniffDocument(new Uint8Array([0xc3])), undefined, "a cut UTF-8 sequence is not text");
  assert.equal(guessFromPath("https://example.com/a.tar.PNG?x=1.pdf", "image/"), "image/png");
  assert.equal(guessFromPath("https://example.com/.png", "image/"), "");
  assert.deepEqual(parseDataUrl("data:,a%FFb", "x"), { mediaType: "", data: new Uint8Array([0x61, 0xff, 0x62]) });
  assert.throws(() => parseDataUrl("data:image/png;base64", "x"), /malformed data URL for x/);
  const source = fs.readFileSync(new URL("../../src/media.ts", import.meta.url), "utf8");
  assert.doesNotMatch(source, /\bBuffer\b|from "node:/, "media.ts must run in a browser");
});

test("a block given as an item brings its images; sources keep their own media type", () => {
  const first = image([files.png as Uint8Array, "https://example.com/b.gif"]);
  const both = asKind(image([first, { data: files.unknown as Uint8Array, mediaType: "image/bmp" }]), "image");
  assert.equal(both?.mediaType, "image/png");
  assert.deepEqual(
    both?.moreImages.map((m) => m.mediaType),
    ["image/gif", "image/bmp"],
  );
  assert.throws(
    () => image([audio(files.wav as Uint8Array)]),
    (e: unknown) => {
      assert.ok(e instanceof ValidationError);
      assert.deepEqual(
        e.violations.map((v) => [v.field, v.ruleId]),
        [["images[0]", "type"]],
      );
      return true;
    },
  );
  assert.equal(asKind(audio({ fileId: "file-7" }), "audio")?.source.case, "fileId");
  assert.throws(() => audio("file:/etc/hosts"), MediaError, "no file is read: the SDK runs in browsers too");
  assert.equal(asKind(document({ url: "https://example.com/r.pdf" }), "document")?.mediaType, "application/pdf");
  assert.equal(
    asKind(document({ fileId: "f" }, { mediaType: "application/pdf" }), "document")?.mediaType,
    "application/pdf",
  );
});
