// A TypeScript client over TLS with a bearer token, for the cross-language tests: appends with the right token,
// then tries a wrong token and no token, and prints one JSON report.
//
//   node dist/interop/secure.js <target> <CA PEM file> <token>

import fs from "node:fs";
import { Client, userText } from "../src/index.js";

const [target, caFile, token] = process.argv.slice(2);
if (target === undefined || caFile === undefined || token === undefined) {
  throw new Error("usage: secure.js <target> <CA PEM file> <token>");
}
const ca = fs.readFileSync(caFile, "utf8");

async function attempt(options: { token?: string }): Promise<string> {
  const client = new Client(target as string, { tls: { ca }, timeoutMs: 5_000, retry: { maxAttempts: 1 }, ...options });
  try {
    const offset = await client.append("secure", userText("over TLS", { id: `tls-${options.token ?? "none"}` }));
    return `offset ${offset}`;
  } catch (error) {
    return (error as Error).name;
  } finally {
    client.close();
  }
}

const report = {
  right: await attempt({ token }),
  wrong: await attempt({ token: `${token}-wrong` }),
  none: await attempt({}),
};
process.stdout.write(`${JSON.stringify(report)}\n`);
