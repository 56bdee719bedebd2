// The Quick start view's snippets (web/src/quickStart.ts): example arguments come from the tool's
// own input schema (defaults, enums, the descriptions' "e.g." examples), only required fields are
// filled, and the curl command survives shell quoting of a single quote in an argument.
import { describe, expect, it } from 'vitest';
import { exampleArguments, quickStartSnippets, starterTool } from '../../web/src/quickStart.ts';

describe('quick start', () => {
  it('fills the required properties from defaults, enums, examples and descriptions', () => {
    const schema = {
      type: 'object',
      required: ['assets', 'chain', 'days', 'window'],
      properties: {
        assets: { type: 'array', items: { type: 'string', description: 'An asset id, ticker or name, e.g. "bitcoin", "ETH".' } },
        chain: { type: 'string', enum: ['ethereum', 'base'] },
        days: { type: 'integer', minimum: 7 },
        window: { type: 'number', default: 30 },
        optional: { type: 'string', description: 'e.g. "not sent"' },
      },
    };
    expect(exampleArguments(schema)).toEqual({ assets: ['bitcoin'], chain: 'ethereum', days: 7, window: 30 });
    expect(exampleArguments(undefined)).toEqual({});
  });

  it('the curl command quotes the body for a POSIX shell and carries the key; without a key both snippets hold a placeholder', () => {
    const key = 'cmcp_0123456789abcdefghijklmnopqrstuvWXYZ12';
    const { curl, sdk } = quickStartSnippets('https://mcp.example.com/', 'market-intelligence', 'search', { q: "it's" }, key);
    expect(curl).toContain('curl -s https://mcp.example.com/mcp/market-intelligence');
    expect(curl).toContain(`-H 'x-api-key: ${key}'`);
    expect(curl).toContain(`"q":"it'\\''s"`);
    expect(sdk).toContain(`'x-api-key': '${key}'`);
    const none = quickStartSnippets('https://mcp.example.com', 'market-intelligence', 'get_capabilities', {}, undefined);
    expect(none.curl).toContain("-H 'x-api-key: <YOUR_API_KEY>'");
    expect(none.sdk).toContain('process.env.CRYPTOMCP_API_KEY!');
  });

  it('offers a paid data call first: the cheapest paid tool whose required arguments all have examples, never a free metadata tool', () => {
    const tool = (name: string, credits: number, input_schema: unknown = { type: 'object' }) => ({ name, credits, input_schema });
    const needsAddress = { type: 'object', required: ['address'], properties: { address: { type: 'string' } } };
    const needsAssets = { type: 'object', required: ['assets'], properties: { assets: { type: 'array', items: { type: 'string', description: 'e.g. "bitcoin"' } } } };
    const tools = [tool('get_capabilities', 0), tool('wallet_profile', 1, needsAddress), tool('get_history', 3, needsAssets), tool('get_prices', 1, needsAssets)];
    expect(starterTool(tools)?.name).toBe('get_prices');
    expect(starterTool([tool('get_capabilities', 0), tool('wallet_profile', 1, needsAddress)])?.name).toBe('get_capabilities');
    expect(starterTool([])).toBeUndefined();
  });
});
