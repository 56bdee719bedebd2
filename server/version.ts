// The service's version, from package.json: a module of its own so the CLI's administrative
// commands can print it without loading the service (server/runtime.ts and everything it imports).
import fs from 'node:fs';

export const VERSION: string = (
  JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
