// How the registry writes a tool's schemas into tools/list (issue 32 item 4, the context budget):
// as few tokens as the spec allows, with nothing an agent or a validator could read differently.
// The outputSchema is an object schema naming only `data` (the envelope's success and metadata are
// the same on every tool, typed once in DESIGN.md §3); a nullable is a type array, an enum or const
// carries no type, shared parts are named after the field that holds them, and an answer of the
// right shape still validates while a wrong one is still refused (Ajv 2020-12, as the SDK clients).
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
const listed = buildRegistry([module]).get('market-intelligence')!.tools;
const listing = listed.get('get_thing')!.listing;

describe('tools/list schemas', () => {
  it('the outputSchema names only data, typed: nullables as type arrays (or null in the enum), no type beside enum or const, shared parts by field name, no additionalProperties', () => {
    expect(listing.outputSchema).toEqual({
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
          },
          required: ['price_usd', 'side', 'covered', 'range', 'previous', 'when'],
        },
      },
      required: ['data'],
      $defs: { range: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } }, required: ['from', 'to'] } },
    });
  });

  it('the compact outputSchema accepts the envelope of a right answer and refuses a wrong data', () => {
    const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(listing.outputSchema!);
    const data = { price_usd: null, side: null, covered: true, range: { from: 'a', to: 'b' }, previous: null, when: '2026-11-26T10:00:00Z' };
    const envelope = { success: true, data, metadata: { timestamp: '2026-11-26T10:00:00.000Z', credits_used: 2 } };
    expect(validate(envelope)).toBe(true);
    expect(validate({ ...envelope, data: { ...data, price_usd: 3.5, side: 'buy', previous: { from: 'c', to: 'd' } } })).toBe(true);
    for (const wrong of [{ price_usd: 'x' }, { side: 'hold' }, { covered: false }, { range: null }, { previous: { from: 1 } }]) {
      expect(validate({ ...envelope, data: { ...data, ...wrong } }), JSON.stringify(wrong)).toBe(false);
    }
    expect(validate({ ...envelope, data: { ...data, range: undefined } })).toBe(false);
    expect(validate({ success: true, metadata: {} })).toBe(false);
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
