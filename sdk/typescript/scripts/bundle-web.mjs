// Bundles the browser entry (@agentmsg/sdk/web, tsc's dist/src/web.js) for platform=browser with esbuild into one
// minified ES module with its source map, dist/browser/agentmsg-web.js, and fails when anything in it imports a Node
// built-in.
//
// Every Node built-in (`node:fs`, `http2`, `fs/promises`...) is kept external rather than left to fail the build one
// at a time, so the check sees them all: esbuild's metafile names each file that imports one, and the bundle's text
// is read for any `node:` specifier left in an import, a dynamic import or a require. Any hit fails with the list.
//
//   node scripts/bundle-web.mjs [ENTRY] [OUTFILE]     (default: dist/src/web.js -> dist/browser/agentmsg-web.js)

import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const SDK = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const entry = resolve(process.argv[2] ?? `${SDK}/dist/src/web.js`);
const outfile = resolve(process.argv[3] ?? `${SDK}/dist/browser/agentmsg-web.js`);

const bare = builtinModules.filter((name) => !name.startsWith("_"));
const builtins = new Set([...bare, ...bare.map((name) => `node:${name}`)]);
const external = [...builtins, "node:*"];

function isBuiltin(path) {
  return path.startsWith("node:") || builtins.has(path) || builtins.has(path.split("/")[0]);
}

let result;
try {
  result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    sourcemap: true,
    metafile: true,
    external,
    logLevel: "silent",
  });
} catch (error) {
  const messages = error.errors?.map((e) => `${e.location?.file ?? ""}: ${e.text}`) ?? [String(error)];
  console.error(`bundling ${relative(process.cwd(), entry)} for the browser failed:\n  ${messages.join("\n  ")}`);
  process.exit(1);
}

const found = [];
for (const [file, input] of Object.entries(result.metafile.inputs)) {
  for (const imported of input.imports) {
    if (isBuiltin(imported.path)) found.push(`${file} imports ${imported.path}`);
  }
}
const text = readFileSync(outfile, "utf8");
const specifier = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](node:[^"']+)["']/g;
for (const match of text.matchAll(specifier)) found.push(`the bundle still imports ${match[1]}`);

if (found.length > 0) {
  console.error(
    `the browser entry ${relative(process.cwd(), entry)} needs Node built-ins:\n  ${[...new Set(found)].join("\n  ")}`,
  );
  process.exit(1);
}
const bytes = result.metafile.outputs[relative(process.cwd(), outfile)]?.bytes ?? text.length;
const inputs = Object.keys(result.metafile.inputs).length;
console.log(`${relative(process.cwd(), outfile)}: ${bytes} bytes from ${inputs} modules, no Node built-in imported`);
