// The layout's import boundaries are lint rules (DESIGN.md §2), and they bite: ESLint, with the
// project's own config, refuses a deliberate violation and accepts the allowed import beside it.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function errorsFor(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the tool contract (server/mcp/) imports nothing from the app', () => {
  it.each([
    ["import { ApiError } from '../errors.ts';", 'app code'],
    ["import type { Meter } from '../metering/meter.ts';", 'metering'],
    ["import Fastify from 'fastify';", 'Fastify'],
    ["import pg from 'pg';", 'pg'],
    ["import type { MCPServerSpec } from '../../operator/api/types.ts';", 'the operator, as everywhere in server/'],
  ])('refuses %s (%s)', async (line) => {
    expect(await errorsFor('server/mcp/registry.ts', `${line}\nexport const used = 1;\n`)).not.toEqual([]);
  });

  it('accepts its own modules and the SDK', async () => {
    const code = "import type { Tool } from '@modelcontextprotocol/server';\nimport type { ServerName } from './names.ts';\nexport type T = [Tool, ServerName];\n";
    expect(await errorsFor('server/mcp/registry.ts', code)).toEqual([]);
  });
});
