// Reads a devnet manifest (written by `cryptomcp devnet`) without loading the devnet's deployer:
// the service only needs what the manifest says, not viem's wallet or the contract artifacts.
import fs from 'node:fs';
import type { DevnetManifest } from './devnet.ts';

export function readDevnetManifest(file: string): DevnetManifest {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as DevnetManifest;
}
