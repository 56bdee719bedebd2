// Address labels (exchange, fund, wallet, ...). Today: the devnet's overlay from its manifest;
// the public label dataset joins it with the on-chain issue's data work.
import fs from 'node:fs';

export interface AddressLabel {
  label: string;
  kind: string;
  source: string;
}

export interface LabelBook {
  get(address: string): AddressLabel | undefined;
}

export function labelsFromDevnetManifest(file: string | undefined): LabelBook {
  const map = new Map<string, AddressLabel>();
  if (file) {
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { accounts: { address: string; label: string; kind: string }[] };
    for (const a of manifest.accounts) map.set(a.address.toLowerCase(), { label: a.label, kind: a.kind, source: 'devnet manifest' });
  }
  return { get: (address) => map.get(address.toLowerCase()) };
}
