// npm run registry:server-json — writes server.json (the MCP Registry entry of the all-in-one
// endpoint) from the tool registry (server/mcp/cards.ts). test/mcp/server-json.test.ts fails when
// the committed file drifts from the code.
import fs from 'node:fs';
import path from 'node:path';
import { offlineServerJson } from './offline-registry.ts';

const file = path.resolve(import.meta.dirname, '../server.json');
fs.writeFileSync(file, offlineServerJson());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
