// npm run devnet:compile — compiles server/devnet/contracts/*.sol with solc (OpenZeppelin 5.7
// sources from node_modules, offline) into server/devnet/artifacts.json (ABI + bytecode), which
// the devnet deploys. Deterministic: a test checks the committed artifacts match a compile of the
// sources (cached by input hash, so only changed sources are compiled again).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONTRACTS = path.join(ROOT, 'server/devnet/contracts');
export const ARTIFACTS = path.join(ROOT, 'server/devnet/artifacts.json');

export interface SolcInput {
  language: 'Solidity';
  sources: Record<string, { content: string }>;
  settings: Record<string, unknown>;
}

export interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** Compiled outputs by input hash: git-ignored, shared by checkouts that share node_modules. */
const CACHE = path.join(ROOT, 'node_modules/.cache/cryptomcp-solc');

/** The versions of what an import can reach (node_modules/@openzeppelin/*), for the cache key. */
function importedPackages(): Record<string, string> {
  const dir = path.join(ROOT, 'node_modules/@openzeppelin');
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
  return Object.fromEntries(names.map((n) => [n, (JSON.parse(fs.readFileSync(path.join(dir, n, 'package.json'), 'utf8')) as { version: string }).version]));
}

/**
 * solc's standard JSON compile, imports read from node_modules, cached by the hash of everything
 * the output depends on (the compiler's version, the sources and settings, the versions of the
 * imported packages): solc is deterministic, and a compile takes seconds, so a file compiled
 * before is read back instead. Outputs with errors are never cached.
 */
export function compileSolidity(input: SolcInput): SolcOutput {
  const key = createHash('sha256').update(JSON.stringify({ solc: solc.version(), input, packages: importedPackages() })).digest('hex');
  const cached = path.join(CACHE, `${key}.json`);
  try {
    return JSON.parse(fs.readFileSync(cached, 'utf8')) as SolcOutput;
  } catch {
    // not compiled yet
  }
  const findImports = (p: string) => {
    const file = path.join(ROOT, 'node_modules', p);
    return fs.existsSync(file) ? { contents: fs.readFileSync(file, 'utf8') } : { error: `not found: ${p}` };
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  fs.mkdirSync(CACHE, { recursive: true });
  // Write then rename, so a parallel reader never sees half a file.
  const tmp = `${cached}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(output));
  fs.renameSync(tmp, cached);
  return output;
}

export function compile(): Record<string, { abi: unknown[]; bytecode: string }> {
  const sources = Object.fromEntries(
    fs.readdirSync(CONTRACTS).filter((f) => f.endsWith('.sol')).sort().map((f) => [f, { content: fs.readFileSync(path.join(CONTRACTS, f), 'utf8') }]),
  );
  const output = compileSolidity({
    language: 'Solidity',
    sources,
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  });
  const artifacts: Record<string, { abi: unknown[]; bytecode: string }> = {};
  for (const file of Object.keys(sources)) {
    for (const [name, c] of Object.entries(output.contracts[file] ?? {})) {
      if (name.startsWith('Dev')) artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    }
  }
  return artifacts;
}

if (import.meta.main) {
  const artifacts = compile();
  fs.writeFileSync(ARTIFACTS, `${JSON.stringify(artifacts)}\n`);
  console.log(`devnet:compile: ${Object.keys(artifacts).join(', ')} -> ${path.relative(ROOT, ARTIFACTS)}`);
}
