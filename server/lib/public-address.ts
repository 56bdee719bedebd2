// Which addresses are the public Internet, and the addresses a host name resolves to when all of
// them are: what every fetch of a URL a user named must check (OAuth client metadata documents,
// alert webhooks), so that URL cannot reach this network.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Every range that is not the public Internet (IANA special-purpose registries, RFC 6890 and
// later). Two lists: a BlockList also matches IPv4 addresses against IPv6 rules as ::ffff:a.b.c.d,
// so the rule refusing IPv4-mapped addresses must never see a plain IPv4 one.
const NON_PUBLIC_V4 = new BlockList();
const NON_PUBLIC_V6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) {
  NON_PUBLIC_V4.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::', 96], // IPv4-compatible (deprecated)
  ['::ffff:0:0', 96], // IPv4-mapped: whatever it embeds, never needed for a public document
  ['64:ff9b::', 96], // NAT64, which embeds an IPv4 address
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo included)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, which embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC_V6.addSubnet(net, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NON_PUBLIC_V4.check(address, 'ipv4');
  if (family === 6) return !NON_PUBLIC_V6.check(address, 'ipv6');
  return false;
}

export class NonPublicAddressError extends Error {}

/** The addresses a host name stands for, all of them public, or an error naming the first that is not. */
export async function publicAddresses(hostname: string): Promise<{ address: string; family: number }[]> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(host);
  const addresses = family ? [{ address: host, family }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new NonPublicAddressError(`${hostname} has no address`);
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new NonPublicAddressError(`${hostname} resolves to ${refused.address}, which is not a public address`);
  return addresses;
}

/** A lookup Node asks instead of DNS: the connection can only go to the address that was checked. */
export function pinnedLookup(pinned: { address: string; family: number }): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}
