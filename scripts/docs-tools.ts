// npm run docs:tools — writes docs/tools.md from the tool registry (server/mcp/tool-docs.ts).
import fs from 'node:fs';
import path from 'node:path';
import { offlineRegistry } from './offline-registry.ts';
import { renderToolDocs } from '../server/mcp/tool-docs.ts';

const file = path.resolve(import.meta.dirname, '../docs/tools.md');
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, renderToolDocs(offlineRegistry()));
console.log(`wrote ${path.relative(process.cwd(), file)}`);
