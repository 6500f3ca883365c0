// @a2a-js/sdk (pinned in package.json / package-lock.json) answering tests/a2a/test_sdk_interop.py.
//
// Usage: node a2a_js.mjs --modules DIR < tasks.json > results.json
// tasks.json: {"tasks": [{"op": "canonicalize", "card"} | {"op": "sign", "card", "jwk", "protected"}
//                        | {"op": "verify", "card", "jwks"}]}
// results.json: {"sdk": "<version>", "results": [{"ok": true, "value": ...} | {"ok": false, "error": "..."}]}
// `sign` uses generateAgentCardSignature with the private JWK; `verify` uses
// verifyAgentCardSignature with a key lookup by `kid` in the given JWKS (never by `jku`).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const modules = args[args.indexOf("--modules") + 1];
const require = createRequire(path.join(modules, "package.json"));
const entry = require.resolve("@a2a-js/sdk");
const sdk = await import(pathToFileURL(entry).href);
const version = JSON.parse(readFileSync(path.join(path.dirname(entry), "..", "package.json"), "utf8")).version;
console.debug = () => {}; // the SDK logs each failed signature entry on stdout

const input = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const task of input.tasks) {
  try {
    if (task.op === "canonicalize") {
      results.push({ ok: true, value: sdk.canonicalizeAgentCard(task.card) });
    } else if (task.op === "sign") {
      const signer = sdk.generateAgentCardSignature(task.jwk, task.protected);
      results.push({ ok: true, value: await signer(task.card) });
    } else if (task.op === "verify") {
      const verifier = sdk.verifyAgentCardSignature(async (kid) => {
        const key = task.jwks.keys.find((k) => k.kid === kid);
        if (!key) throw new Error(`unknown kid ${kid}`);
        return key;
      });
      await verifier(task.card);
      results.push({ ok: true, value: null });
    } else {
      results.push({ ok: false, error: `unknown op ${task.op}` });
    }
  } catch (error) {
    results.push({ ok: false, error: String(error && error.message ? error.message : error) });
  }
}
process.stdout.write(JSON.stringify({ sdk: version, results }));
