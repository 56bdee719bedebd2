// npm run devnet:compile — compiles server/devnet/contracts/*.sol with solc (OpenZeppelin 5.7
// sources from node_modules, offline) into server/devnet/artifacts.json (ABI + bytecode), which
// the devnet deploys. Deterministic: a test checks the committed artifacts match a fresh compile.
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONTRACTS = path.join(ROOT, 'server/devnet/contracts');
export const ARTIFACTS = path.join(ROOT, 'server/devnet/artifacts.json');

export function compile(): Record<string, { abi: unknown[]; bytecode: string }> {
  const sources = Object.fromEntries(
    fs.readdirSync(CONTRACTS).filter((f) => f.endsWith('.sol')).sort().map((f) => [f, { content: fs.readFileSync(path.join(CONTRACTS, f), 'utf8') }]),
  );
  const input = {
    language: 'Solidity',
    sources,
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImports = (p: string) => {
    const file = path.join(ROOT, 'node_modules', p);
    return fs.existsSync(file) ? { contents: fs.readFileSync(file, 'utf8') } : { error: `not found: ${p}` };
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
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
