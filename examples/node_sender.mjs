// An AJP sender in Node, building each offer as the reference client's AJPClient.send builds it
// (its defaults, toISOString timestamps, provenance-protocol's canonicalizer, Node's crypto), then:
// send it, send the same bytes again (an honest retry), poll its status, ack it, send a bad ack.
//
//   node node_sender.mjs --modules DIR --url http://127.0.0.1:PORT --config FILE
//
// DIR holds node_modules with provenance-protocol (an `npm ci` of tests/interop).  FILE is JSON:
// {"from": {...}, "to": "provenance:...", "task": {...}, "budget"?: {...},
//  "private_key"?: base64 PKCS#8 (agents) | "secret"?: text (humans), "job_id"?: "..."}.
// Prints one JSON document: {"offer_b64", "job_id", "steps": [{step, status, worker, duplicate, body}]}.
// Every request has a 10 s timeout; the status is polled at most 20 times.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import crypto from 'node:crypto';

const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.modules || !args.url || !args.config) {
  console.error('usage: node node_sender.mjs --modules DIR --url BASE --config FILE');
  process.exit(2);
}
const modules = join(args.modules, 'node_modules');
// provenance-protocol exports its canonicalizer only through declarationSigningPayload:
// {"v": value} gives `provenance-declaration-v1:{"v":<canonical value>}`.
const { declarationSigningPayload } = await import(pathToFileURL(join(modules, 'provenance-protocol', 'src', 'canonical.js')).href);
const PREFIX = 'provenance-declaration-v1:{"v":';
function canonical (value) {
  const payload = declarationSigningPayload({ v: value });
  if (!payload.startsWith(PREFIX) || !payload.endsWith('}')) throw new Error('unexpected payload shape');
  return payload.slice(PREFIX.length, -1);
}

const config = JSON.parse(readFileSync(args.config, 'utf8'));

// AJPClient.send: the offer's members, defaults and signature, as the reference client writes them.
function buildOffer () {
  const from = config.from;
  const task = config.task;
  const budget = config.budget || {};
  const now = new Date();
  const maxSeconds = budget.max_seconds ?? 120;
  const offer = {
    ajp: '0.1',
    job_id: config.job_id || `job_${Date.now().toString(36)}${crypto.randomBytes(6).toString('hex')}`,
    parent_job_id: null,
    from: {
      type: from.type,
      id: from.id || null,
      provenance_id: from.provenance_id || null,
      declaration_url: from.declaration_url || null
    },
    to: { provenance_id: config.to },
    task: { ...task, input: task.input || {}, output_format: task.output_format || 'json' },
    context: { credentials: {}, memory: [], constraints: [] },
    budget: { max_usd: budget.max_usd ?? 1.0, max_seconds: maxSeconds, max_llm_tokens: budget.max_llm_tokens ?? 10000 },
    callback: null,
    issued_at: now.toISOString(),
    expires_at: new Date(now.getTime() + (maxSeconds || 120) * 1000).toISOString()
  };
  const body = Buffer.from(canonical(offer), 'utf8');
  if (config.private_key) {
    const key = crypto.createPrivateKey({ key: Buffer.from(config.private_key, 'base64'), format: 'der', type: 'pkcs8' });
    offer.signature = 'ed25519:' + crypto.sign(null, body, key).toString('base64');
  } else {
    offer.signature = 'sha256:' + crypto.createHmac('sha256', config.secret).update(body).digest('hex');
  }
  return offer;
}

async function call (step, method, url, body) {
  const response = await fetch(url, {
    method,
    body,
    headers: { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(10000)
  });
  const text = await response.text();
  const entry = {
    step,
    status: response.status,
    worker: response.headers.get('x-worker'),
    duplicate: response.headers.get('x-ajp-duplicate') === 'true',
    body: text ? JSON.parse(text) : null
  };
  steps.push(entry);
  return entry;
}

const steps = [];
const offer = buildOffer();
const wire = JSON.stringify(offer);  // what the reference client POSTs
const base = args.url.replace(/\/$/, '');
const sent = await call('send', 'POST', `${base}/jobs`, wire);
if (sent.status === 202) {
  await call('retry', 'POST', `${base}/jobs`, wire);
  for (let i = 0; i < 20; i++) {
    const status = await call('status', 'GET', `${base}/jobs/${offer.job_id}`);
    if (status.status !== 200 || ['completed', 'failed', 'rejected', 'expired'].includes(status.body.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await call('ack', 'POST', `${base}/jobs/${offer.job_id}/ack`, JSON.stringify({ received: true, feedback: 'thanks' }));
  await call('bad ack', 'POST', `${base}/jobs/${offer.job_id}/ack`, JSON.stringify({ received: 'yes' }));
}
console.log(JSON.stringify({ offer_b64: Buffer.from(wire, 'utf8').toString('base64'), job_id: offer.job_id, steps }));
