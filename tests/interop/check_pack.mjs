// The JavaScript side of ajpcore's interop check (run by tests/conformance/test_node_reference.py).
//
//   node check_pack.mjs --modules DIR [--pack DIR] [--docs-in FILE] [--docs-out FILE --count N --seed S]
//
// DIR holds node_modules with the packages pinned in package.json / package-lock.json
// (`npm ci --prefix DIR` after copying both there).  It checks:
//   --pack      every canonical.json case (JSON.parse, then npm `canonicalize` and
//               provenance-protocol 0.3.0's canonicalizer) and every signatures.json case
//               (Node's crypto: HMAC-SHA256, Ed25519, and the pre-0.3 form
//               JSON.stringify(rest, Object.keys(rest).sort())) against the pack's expectation;
//   --docs-in   JSON lines {"input", "canonical"} written by ajpcore: both canonicalizers must
//               give ajpcore's canonical text;
//   --docs-out  writes N seeded random documents as JSON lines {"input", "canonical"}, the
//               canonical text from provenance-protocol (npm canonicalize must agree), for
//               ajpcore to check the other way.
// Prints one JSON summary on stdout; exit 0 when nothing disagrees outside the cases the pack
// marks `js_lax` (those are counted, not hidden), 1 otherwise, 2 on usage errors.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import crypto from 'node:crypto';

function parseArgs (argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) {
      console.error(`usage: node check_pack.mjs --modules DIR [--pack DIR] [--docs-in FILE] [--docs-out FILE --count N --seed S]`);
      process.exit(2);
    }
    out[argv[i].slice(2)] = argv[i + 1];
  }
  if (!out.modules) {
    console.error('--modules DIR is required (a folder with node_modules from `npm ci`)');
    process.exit(2);
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
const modules = join(args.modules, 'node_modules');
const started = process.hrtime.bigint();

function packageVersion (name) {
  return JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')).version;
}

const npmCanonicalize = (await import(pathToFileURL(join(modules, 'canonicalize', 'lib', 'canonicalize.js')).href)).default;
// provenance-protocol exports its canonicalizer only through declarationSigningPayload:
// wrapping a value as {"v": value} gives `provenance-declaration-v1:{"v":<canonical value>}`.
const { declarationSigningPayload } = await import(pathToFileURL(join(modules, 'provenance-protocol', 'src', 'canonical.js')).href);
const PREFIX = 'provenance-declaration-v1:{"v":';

function provenanceCanonicalize (value) {
  const payload = declarationSigningPayload({ v: value });
  if (!payload.startsWith(PREFIX) || !payload.endsWith('}')) throw new Error('unexpected payload shape');
  return payload.slice(PREFIX.length, -1);
}

const CANONICALIZERS = { canonicalize: npmCanonicalize, provenance: provenanceCanonicalize };

const summary = {
  node: process.version,
  packages: { canonicalize: packageVersion('canonicalize'), 'provenance-protocol': packageVersion('provenance-protocol') },
  failures: []
};

function fail (what) {
  if (summary.failures.length < 50) summary.failures.push(what);
  summary.failure_count = (summary.failure_count ?? 0) + 1;
}

function loadPack (name) {
  return JSON.parse(readFileSync(join(args.pack, name), 'utf8')).cases;
}

// -- canonical.json --------------------------------------------------------------------------

function canonicalResult (text, canon) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `JSON.parse: ${e.message.slice(0, 60)}` };
  }
  try {
    return { text: canon(value) };
  } catch (e) {
    return { error: `${e.name}: ${e.message.slice(0, 60)}` };
  }
}

function checkCanonical () {
  const stats = { cases: 0, checks: 0, agree: 0, lax_differ: 0, lax_agree: 0, lax_agree_ids: [] };
  for (const c of loadPack('canonical.json')) {
    stats.cases++;
    for (const [name, canon] of Object.entries(CANONICALIZERS)) {
      stats.checks++;
      const got = canonicalResult(c.input, canon);
      const ok = 'canonical' in c ? got.text === c.canonical : got.error !== undefined;
      if (ok) {
        stats.agree++;
        if (c.js_lax) {
          stats.lax_agree++;
          stats.lax_agree_ids.push(`${c.id} (${name})`);
        }
      } else if (c.js_lax) {
        stats.lax_differ++;
      } else {
        fail(`canonical ${c.id} (${name}): expected ${c.canonical ?? 'refusal ' + c.error}, got ${got.text ?? got.error}`.slice(0, 300));
      }
    }
  }
  summary.canonical = stats;
}

// -- signatures.json -------------------------------------------------------------------------

const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function publicKeyObject (text) {
  let der;
  if (text.startsWith('ed25519:')) {
    const body = text.slice(8);
    const raw = body.length === 64 ? Buffer.from(body, 'hex') : Buffer.from(body, 'base64');
    der = Buffer.concat([SPKI_PREFIX, raw]);
  } else {
    der = Buffer.from(text, 'base64');
  }
  return crypto.createPublicKey({ key: der, format: 'der', type: 'spki' });
}

// What the reference SDK 0.3 signs of a JobResult (mirrors its sign/verify code).
function sdkSubset (r) {
  return {
    job_id: r.job_id,
    status: r.status,
    output: r.output,
    constraints_asserted: r.constraints_asserted,
    completed_at: r.completed_at,
    agent: { provenance_id: r.agent?.provenance_id }
  };
}

function macMatches (secret, text, tag) {
  const mac = crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(text, 'utf8')).digest();
  return crypto.timingSafeEqual(mac, tag);
}

function edMatches (key, text, sig) {
  return crypto.verify(null, Buffer.from(text, 'utf8'), key, sig);
}

function signatureVerdict (c, canon) {
  const body = c.body;
  if (!Object.prototype.hasOwnProperty.call(body, 'signature')) return 'malformed';
  const sig = body.signature;
  if (typeof sig !== 'string') return 'malformed';
  let scheme, raw;
  if (/^sha256:[0-9a-f]{64}$/.test(sig)) {
    scheme = 'sha256';
    raw = Buffer.from(sig.slice(7), 'hex');
  } else if (/^ed25519:[A-Za-z0-9+/]{85}[AQgw]==$/.test(sig)) {
    scheme = 'ed25519';
    raw = Buffer.from(sig.slice(8), 'base64');
  } else if (sig.startsWith('sha256:') || sig.startsWith('ed25519:')) {
    return 'malformed';
  } else if (/^[a-z][a-z0-9_-]{0,31}:/.test(sig)) {
    return 'unsupported_scheme';
  } else {
    return 'malformed';
  }
  const withSecret = c.secret !== undefined;
  if (withSecret !== (scheme === 'sha256')) return 'unsupported_scheme';
  const { signature: _dropped, ...rest } = c.mode === 'sdk' ? { ...sdkSubset(body), signature: null } : body;
  let matches;
  if (withSecret) {
    matches = (text) => macMatches(c.secret, text, raw);
  } else {
    let key;
    try {
      key = publicKeyObject(c.public_key);
    } catch (e) {
      return 'bad'; // OpenSSL refused the key itself
    }
    matches = (text) => edMatches(key, text, raw);
  }
  if (matches(canon(rest))) return 'valid';
  // The pre-0.3 SDK's form, exactly as it wrote it.
  if (matches(JSON.stringify(rest, Object.keys(rest).sort()))) return 'legacy';
  return 'bad';
}

function checkSignatures () {
  const stats = { cases: 0, checks: 0, agree: 0, lax_differ: 0, lax_agree: 0, hmac: 0, ed25519: 0 };
  for (const c of loadPack('signatures.json')) {
    stats.cases++;
    if (c.secret !== undefined) stats.hmac++; else stats.ed25519++;
    for (const [name, canon] of Object.entries(CANONICALIZERS)) {
      stats.checks++;
      let got;
      try {
        got = signatureVerdict(c, canon);
      } catch (e) {
        got = `${e.name}: ${e.message.slice(0, 80)}`;
      }
      if (got === c.expect) {
        stats.agree++;
        if (c.js_lax) stats.lax_agree++;
      } else if (c.js_lax) {
        stats.lax_differ++;
      } else {
        fail(`signatures ${c.id} (${name}): expected ${c.expect}, got ${got}`);
      }
    }
  }
  summary.signatures = stats;
}

// -- random documents ------------------------------------------------------------------------

function checkDocsIn () {
  const lines = readFileSync(args['docs-in'], 'utf8').split('\n').filter(Boolean);
  const stats = { documents: lines.length, checks: 0, agree: 0 };
  for (const [i, line] of lines.entries()) {
    const doc = JSON.parse(line);
    for (const [name, canon] of Object.entries(CANONICALIZERS)) {
      stats.checks++;
      const got = canonicalResult(doc.input, canon);
      if (got.text === doc.canonical) stats.agree++;
      else fail(`docs-in #${i} (${name}): ajpcore ${doc.canonical.slice(0, 120)} vs ${(got.text ?? got.error).slice(0, 120)}`);
    }
  }
  summary.docs_in = stats;
}

function mulberry32 (seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters chosen to exercise escaping and UTF-16 order; no lone surrogates and no
// noncharacters (strict receivers refuse those, which is what the pack's cases are for).
const ALPHABET = ['a', 'Z', '0', '_', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', '\u00e9', 'e\u0301',
  '\u2028', '\u20ac', '\u4e2d', '\ufb33', '\ufeff', '\ufffd', '\ud83d\ude00', '\ud800\udc00', '\udbff\udffd', '\ue000'];
const NUMBERS = [0, -0, 1, -1, 5e-324, 1e21, 1e-7, 1e-6, 0.1, 2 ** 53 - 1, 2 ** 53, 2 ** 64, 1.7976931348623157e308,
  123456789012345680000, 999999999999999900000, 4.35, 0.30000000000000004];

function randomDocuments (count, seed) {
  const rand = mulberry32(seed);
  const int = (n) => Math.floor(rand() * n);
  const bits = new DataView(new ArrayBuffer(8));
  const randomDouble = () => {
    for (;;) {
      bits.setUint32(0, int(2 ** 32));
      bits.setUint32(4, int(2 ** 32));
      const x = bits.getFloat64(0);
      if (Number.isFinite(x)) return x;
    }
  };
  const text = () => Array.from({ length: int(7) }, () => ALPHABET[int(ALPHABET.length)]).join('');
  const value = (depth) => {
    const r = rand();
    if (depth > 4 || r < 0.4) {
      switch (int(8)) {
        case 0: return null;
        case 1: return rand() < 0.5;
        case 2: return NUMBERS[int(NUMBERS.length)];
        case 3: return randomDouble();
        case 4: return int(2 ** 31) - 2 ** 30;
        case 5: return (rand() - 0.5) * 10 ** (int(40) - 20);
        default: return text();
      }
    }
    if (r < 0.7) return Array.from({ length: int(5) }, () => value(depth + 1));
    const obj = {};
    for (let i = int(6); i > 0; i--) obj[text()] = value(depth + 1);
    return obj;
  };
  const docs = [];
  for (let i = 0; i < count; i++) {
    const doc = value(rand() < 0.2 ? 4 : 0);
    docs.push(doc);
  }
  return docs;
}

function writeDocsOut () {
  const count = Number(args.count ?? 1000);
  const seed = Number(args.seed ?? 12);
  const lines = [];
  const stats = { documents: count, npm_agrees: 0 };
  for (const [i, doc] of randomDocuments(count, seed).entries()) {
    const canonical = provenanceCanonicalize(doc);
    if (npmCanonicalize(doc) === canonical) stats.npm_agrees++;
    else fail(`docs-out #${i}: provenance and npm canonicalize differ`);
    // The wire text as a JS sender writes it: insertion order, sometimes indented.
    lines.push(JSON.stringify({ input: JSON.stringify(doc, null, i % 3 === 0 ? 2 : undefined), canonical }));
  }
  writeFileSync(args['docs-out'], lines.join('\n') + '\n');
  summary.docs_out = stats;
}

if (args.pack) {
  checkCanonical();
  checkSignatures();
}
if (args['docs-in']) checkDocsIn();
if (args['docs-out']) writeDocsOut();
summary.seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(JSON.stringify(summary));
process.exit(summary.failure_count ? 1 : 0);
