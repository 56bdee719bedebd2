// npm run bench:context — what our tool listings cost an agent's context, in tokens of the
// o200k_base encoding (gpt-tokenizer), counted on the tools/list answers the running service sends
// over HTTP to the MCP SDK's client: each server's listing, the nine together, the all-in-one
// endpoint's ({base}/mcp) and its discovery mode ({base}/mcp/discover). "before" is the same bench run at 6c4bf33 (every
// tool with the generic envelope outputSchema, data typed only as object); bench/NOTES.md has the
// run. Target (issue 32): the nine per-server listings together ≤ 75% of before. The alert rules'
// tools (issue 33) came after that run, so the nine are also counted without them: the tools
// "before" counted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { z } from 'zod';
import { startEmbedded } from '../server/db/embedded.ts';
import { createDatabase } from '../server/db/pool.ts';
import { SERVER_NAMES } from '../server/mcp/names.ts';
import { createAccountWithKey, createUnlimitedPlan, startTestService } from '../test/helpers/service.ts';

/** Tokens of each listing at 6c4bf33 (bench/NOTES.md, "bench:context"). */
const BEFORE: Record<string, number> = {
  'price-prediction': 4289,
  'market-intelligence': 3631,
  'blockchain-explorer': 4355,
  'token-intelligence': 2813,
  'portfolio-analytics': 2159,
  'whale-intelligence': 3976,
  'social-intelligence': 3602,
  'kol-analytics': 3399,
  'project-intelligence': 3699,
  'the nine together': 31923,
  'all-in-one (/mcp)': 24694,
};

/** The discovery mode of the all-in-one endpoint (issue 32 item 2, docs/clients.md): its tools/list is three meta-tools. */
const discoveryUrl = (base: string) => `${base}/mcp/discover`;

const ListAnswer = z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })) });

/** The alert rules' tools (issue 33), added to three servers after the "before" run. */
const isAlertTool = (name: string) => /^create_\w+_alert$|^(list|pause|resume|delete)_alert_rules?$|^get_alerts$/.test(name);

/** Tokens of one part of every tool of a listing (each part as its own JSON value). */
interface Parts {
  descriptionTokens: number;
  inputSchemaTokens: number;
  outputSchemaTokens: number;
}

function partsOf(tools: Record<string, unknown>[]): Parts {
  const sum = (key: string) => tools.reduce((n, t) => n + (key in t ? countTokens(JSON.stringify(t[key])) : 0), 0);
  return { descriptionTokens: sum('description'), inputSchemaTokens: sum('inputSchema'), outputSchemaTokens: sum('outputSchema') };
}

async function listing(url: string, key: string): Promise<Parts & { json: string; tools: number; withoutAlerts: { tools: number; tokens: number } }> {
  const client = new Client({ name: 'bench-context', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-api-key': key } } }));
  try {
    const answer = await client.request({ method: 'tools/list', params: {} }, ListAnswer);
    const kept = answer.tools.filter((t) => !isAlertTool(t.name));
    return { json: JSON.stringify(answer), tools: answer.tools.length, ...partsOf(answer.tools), withoutAlerts: { tools: kept.length, tokens: countTokens(JSON.stringify({ ...answer, tools: kept })) } };
  } finally {
    await client.close();
  }
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cmcp-bench-context-'));
fs.chmodSync(root, 0o755);
const pg = await startEmbedded(path.join(root, 'pg'));
const db = createDatabase({ url: pg.url, max: 2 });
// No bench tools: the listings are the ones users get.
const svc = await startTestService(pg.url, { CRYPTOMCP_BENCH_TOOLS: undefined });
await createUnlimitedPlan(db, 'bench-context', 1_000);
const { key } = await createAccountWithKey(db, { plan: 'bench-context' });

interface Row extends Parts {
  name: string;
  tools: number;
  chars: number;
  tokens: number;
}
const rows: Row[] = [];
const withoutAlerts = { tools: 0, tokens: 0 };
const measure = async (name: string, url: string) => {
  const l = await listing(url, key);
  rows.push({ name, tools: l.tools, chars: l.json.length, tokens: countTokens(l.json), descriptionTokens: l.descriptionTokens, inputSchemaTokens: l.inputSchemaTokens, outputSchemaTokens: l.outputSchemaTokens });
  return l;
};
for (const server of SERVER_NAMES) {
  const l = await measure(server, `${svc.url}/mcp/${server}`);
  withoutAlerts.tools += l.withoutAlerts.tools;
  withoutAlerts.tokens += l.withoutAlerts.tokens;
}
const perServer = [...rows];
rows.push({
  name: 'the nine together',
  tools: perServer.reduce((n, r) => n + r.tools, 0),
  chars: perServer.reduce((n, r) => n + r.chars, 0),
  tokens: perServer.reduce((n, r) => n + r.tokens, 0),
  descriptionTokens: perServer.reduce((n, r) => n + r.descriptionTokens, 0),
  inputSchemaTokens: perServer.reduce((n, r) => n + r.inputSchemaTokens, 0),
  outputSchemaTokens: perServer.reduce((n, r) => n + r.outputSchemaTokens, 0),
});
await measure('all-in-one (/mcp)', `${svc.url}/mcp`);
await measure('discovery mode', discoveryUrl(svc.url));

const cell = (v: string | number, w: number) => String(v).padStart(w);
const discoveryTokens = rows.find((r) => r.name === 'discovery mode')!.tokens;
const ratio = (now: number, before: number | undefined) => (before === undefined ? 'n/a' : `${((now / before) * 100).toFixed(0)}%`);
console.log('bench:context — tokens (o200k_base, gpt-tokenizer) of each tools/list answer, as the MCP SDK client receives it over HTTP');
console.log('of which, summed over the tools, each part as its own JSON value: descriptions (tool descriptions), inputSchema, outputSchema');
console.log(`${'listing'.padEnd(22)}${cell('tools', 6)}${cell('chars', 9)}${cell('before', 9)}${cell('tokens', 9)}${cell('now/before', 12)}${cell('descriptions', 14)}${cell('inputSchema', 13)}${cell('outputSchema', 14)}`);
for (const r of rows) {
  const before = BEFORE[r.name];
  console.log(`${r.name.padEnd(22)}${cell(r.tools, 6)}${cell(r.chars, 9)}${cell(before ?? 'n/a', 9)}${cell(r.tokens, 9)}${cell(ratio(r.tokens, before), 12)}${cell(r.descriptionTokens, 14)}${cell(r.inputSchemaTokens, 13)}${cell(r.outputSchemaTokens, 14)}`);
}
const nine = rows.find((r) => r.name === 'the nine together')!;
const nineBefore = BEFORE['the nine together'];
if (nineBefore !== undefined) {
  const share = nine.tokens / nineBefore;
  console.log(`target: the nine per-server listings together ≤ 75% of before: ${(share * 100).toFixed(1)}% ${share <= 0.75 ? 'met' : 'MISSED'}`);
  const like = withoutAlerts.tokens / nineBefore;
  console.log(`the nine without the alert rules' tools (issue 33, after "before"): ${withoutAlerts.tools} tools, ${withoutAlerts.tokens} tokens, ${(like * 100).toFixed(1)}% of before ${like <= 0.75 ? 'met' : 'MISSED'}`);
}
console.log(`target: discovery mode ≤ 1,500 tokens: ${discoveryTokens} ${discoveryTokens <= 1500 ? 'met' : 'MISSED'}`);

await svc.close();
await db.close();
await pg.stop();
fs.rmSync(root, { recursive: true, force: true });
