// How the registry writes a tool's schemas into tools/list (issue 32 item 4, the context budget):
// as few tokens as the spec allows, with nothing an agent or a validator could read differently.
// The outputSchema is an object schema naming only `data` (the envelope's success and metadata are
// the same on every tool, typed once in DESIGN.md §3); a nullable is a type array, an enum or const
// carries no type, shared parts are named after the field that holds them, and an answer of the
// right shape still validates while a wrong one is still refused (Ajv 2020-12, as the SDK clients).
// The listing publishes it without `required` arrays; the strict schema, with them, is kept beside
// it (and is what test/mcp/every-tool.test.ts validates every real answer against as well).
// A union of objects lists the fields its branches hold alike once.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildRegistry } from '../../server/mcp/registry.ts';
import { defineTool, type ServerModule } from '../../server/mcp/tool.ts';

const point = z.object({ from: z.string(), to: z.string() });
const tool = defineTool({
  name: 'get_thing',
  title: 'Thing',
  description: 'Returns a thing.',
  credits: 2,
  input: z.object({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe('A day.'), kind: z.enum(['a', 'b']).default('a') }).strict(),
  output: z.object({
    price_usd: z.number().nullable(),
    side: z.enum(['buy', 'sell']).nullable(),
    covered: z.literal(true),
    range: point,
    previous: point.nullable(),
    when: z.iso.datetime(),
    note: z.string().optional(),
    hint: z.string().optional().describe('Only on Mondays.'),
  }),
  handler: () => Promise.reject(new Error('not called')),
});
const module: ServerModule = {
  name: 'market-intelligence',
  title: 'Market',
  icon: '<svg xmlns="http://www.w3.org/2000/svg"/>',
  description: 'Markets.',
  chains: [],
  dataFreshness: 'snapshot',
  freshness: 'daily',
  tools: [tool, defineTool({ ...tool, name: 'get_own_thing', openWorld: false })],
};
const stance = { asset: z.string().describe('An asset id.'), window: point };
const unionTool = defineTool({
  ...tool,
  name: 'get_union',
  output: z.discriminatedUnion('covered', [
    z.object({ ...stance, covered: z.literal(false), reason: z.string() }),
    z.object({ ...stance, covered: z.literal(true), score: z.number().nullable() }),
  ]),
  handler: () => Promise.reject(new Error('not called')),
});
const listed = buildRegistry([{ ...module, tools: [...module.tools, unionTool] }]).get('market-intelligence')!.tools;
const listing = listed.get('get_thing')!.listing;

const ajv = () => new Ajv2020({ strict: false, validateFormats: false });

function omitRequired(schema: unknown): unknown {
  return Object.fromEntries(Object.entries(schema as Record<string, unknown>).filter(([k]) => k !== 'required'));
}

describe('tools/list schemas', () => {
  it('the strict outputSchema names only data, typed: nullables as type arrays (or null in the enum), no type beside enum or const, shared parts by field name, no additionalProperties, every field required', () => {
    expect(listed.get('get_thing')!.strictOutputSchema).toEqual({
      type: 'object',
      properties: {
        data: {
          type: 'object',
          properties: {
            price_usd: { type: ['number', 'null'] },
            side: { enum: ['buy', 'sell', null] },
            covered: { const: true },
            range: { $ref: '#/$defs/range' },
            previous: { anyOf: [{ $ref: '#/$defs/range' }, { type: 'null' }] },
            when: { type: 'string', format: 'date-time' },
            note: { type: 'string' },
            hint: { type: 'string', description: 'Only on Mondays.' },
          },
          required: ['price_usd', 'side', 'covered', 'range', 'previous', 'when'],
        },
      },
      required: ['data'],
      $defs: { range: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } }, required: ['from', 'to'] } },
    });
  });

  it('the listed outputSchema is the strict one without its required arrays, a field that may be left out saying "Optional." first', () => {
    const strict = listed.get('get_thing')!.strictOutputSchema;
    const data = omitRequired((strict.properties as Record<string, unknown>).data) as { properties: Record<string, unknown> };
    expect(listing.outputSchema).toEqual({
      type: 'object',
      properties: {
        data: {
          ...data,
          properties: { ...data.properties, note: { type: 'string', description: 'Optional.' }, hint: { type: 'string', description: 'Optional. Only on Mondays.' } },
        },
      },
      $defs: { range: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } } } },
    });
    expect(JSON.stringify(listing.outputSchema)).not.toContain('"required"');
  });

  it('a union of objects lists the fields its branches hold alike once, beside what each branch adds', () => {
    expect(listed.get('get_union')!.listing.outputSchema).toEqual({
      type: 'object',
      properties: {
        data: {
          type: 'object',
          properties: { asset: { type: 'string', description: 'An asset id.' }, window: { $ref: '#/$defs/window' } },
          oneOf: [
            { properties: { covered: { const: false }, reason: { type: 'string' } } },
            { properties: { covered: { const: true }, score: { type: ['number', 'null'] } } },
          ],
        },
      },
      $defs: { window: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } } } },
    });
    const validate = ajv().compile(listed.get('get_union')!.listing.outputSchema!);
    const window = { from: 'a', to: 'b' };
    expect(validate({ data: { asset: 'btc', window, covered: false, reason: 'no posts' } })).toBe(true);
    expect(validate({ data: { asset: 'btc', window, covered: true, score: null } })).toBe(true);
    for (const wrong of [{ covered: 'yes' }, { covered: true, score: 'x' }, { covered: false, reason: 3 }, { asset: 1, covered: true }, { covered: true, window: { from: 2 } }]) {
      expect(validate({ data: { asset: 'btc', window, ...wrong } }), JSON.stringify(wrong)).toBe(false);
    }
  });

  it('the listed outputSchema accepts the envelope of a right answer and refuses a wrong type; the strict one also refuses a missing field', () => {
    const validate = ajv().compile(listing.outputSchema!);
    const strict = ajv().compile(listed.get('get_thing')!.strictOutputSchema);
    const data = { price_usd: null, side: null, covered: true, range: { from: 'a', to: 'b' }, previous: null, when: '2026-11-26T10:00:00Z' };
    const envelope = { success: true, data, metadata: { timestamp: '2026-11-26T10:00:00.000Z', credits_used: 2 } };
    for (const v of [validate, strict]) {
      expect(v(envelope)).toBe(true);
      expect(v({ ...envelope, data: { ...data, price_usd: 3.5, side: 'buy', previous: { from: 'c', to: 'd' } } })).toBe(true);
      for (const wrong of [{ price_usd: 'x' }, { side: 'hold' }, { covered: false }, { range: null }, { previous: { from: 1 } }]) {
        expect(v({ ...envelope, data: { ...data, ...wrong } }), JSON.stringify(wrong)).toBe(false);
      }
    }
    expect(strict({ ...envelope, data: { ...data, range: undefined } })).toBe(false);
    expect(strict({ success: true, metadata: {} })).toBe(false);
  });

  it('the inputSchema: a day as format date, an enum without its type, no additionalProperties (the handler’s strict schema still refuses unknown arguments)', () => {
    expect(listing.inputSchema).toEqual({
      type: 'object',
      properties: { day: { type: 'string', format: 'date', description: 'A day.' }, kind: { default: 'a', enum: ['a', 'b'] } },
      required: ['day'],
    });
    expect(tool.input.safeParse({ day: '2026-11-26', extra: 1 }).success).toBe(false);
  });

  it('annotations say only what the listing does not: no second title, openWorldHint only when false', () => {
    expect(listing.title).toBe('Thing');
    expect(listing.annotations).toEqual({ readOnlyHint: true });
    expect(listed.get('get_own_thing')!.listing.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
  });
});
