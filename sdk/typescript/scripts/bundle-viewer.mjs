// Bundles the session viewer (viewer/src/main.ts, on @agentmsg/sdk/web) for the browser with esbuild, into the Python
// package's web assets, src/agentmsg/service/http/static/: viewer.js (one minified ES module),
// viewer.css and index.html, served by `agentmsg serve --http` at /. Everything comes from the committed lock file:
// the page loads nothing from another origin.
//
//   node scripts/bundle-viewer.mjs [OUTDIR]

import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const SDK = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const VIEWER = `${SDK}/viewer`;
const outdir = resolve(process.argv[2] ?? `${SDK}/../../src/agentmsg/service/http/static`);
mkdirSync(`${outdir}/viewer`, { recursive: true });

let result;
try {
  result = await build({
    entryPoints: [`${VIEWER}/src/main.ts`],
    tsconfig: `${VIEWER}/tsconfig.json`,
    outfile: `${outdir}/viewer/viewer.js`,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    // No source map: it would add 2.7 MB (the SDK's sources) to every wheel.
    sourcemap: false,
    metafile: true,
    logLevel: "silent",
  });
} catch (error) {
  const messages = error.errors?.map((e) => `${e.location?.file ?? ""}: ${e.text}`) ?? [String(error)];
  console.error(`bundling the viewer failed:\n  ${messages.join("\n  ")}`);
  process.exit(1);
}
copyFileSync(`${VIEWER}/index.html`, `${outdir}/index.html`);
copyFileSync(`${VIEWER}/viewer.css`, `${outdir}/viewer/viewer.css`);
copyFileSync(`${VIEWER}/favicon.svg`, `${outdir}/viewer/favicon.svg`);
const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined)?.bytes ?? 0;
console.log(
  `${relative(process.cwd(), outdir)}: index.html, viewer/viewer.js (${bytes} bytes), viewer/viewer.css, viewer/favicon.svg`,
);
