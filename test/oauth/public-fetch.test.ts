// Which addresses a Client ID Metadata Document may be fetched from: public ones only. Checked
// on the address itself (the fetch resolves the host, checks every address, then connects to the
// one it checked); the end-to-end refusals are in bad-input.test.ts.
import { describe, expect, it } from 'vitest';
import { isPublicAddress, NonPublicAddressError, publicAddresses } from '../../server/lib/public-address.ts';
import { publicFetch } from '../../server/oauth/public-fetch.ts';

describe('isPublicAddress', () => {
  it.each([
    '0.0.0.0', '0.1.2.3', '10.1.2.3', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.255.0.1', '169.254.169.254', '172.16.0.1', '172.31.255.255',
    '192.0.0.8', '192.0.2.1', '192.168.1.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
    '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:8.8.8.8', '::127.0.0.1', '64:ff9b::a00:1', '2001:db8::1', '2002:a00:1::1', '2001::1',
    'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf::1', 'fec0::1', 'ff02::1', 'not an address',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.169.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e'])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('publicAddresses / publicFetch', () => {
  it('a name that resolves to loopback is refused before any connection', async () => {
    await expect(publicAddresses('localhost')).rejects.toBeInstanceOf(NonPublicAddressError);
    await expect(publicFetch(new URL('https://localhost:1/doc.json'))).rejects.toBeInstanceOf(NonPublicAddressError);
  });

  it('bracketed IPv6 literals are checked as addresses', async () => {
    await expect(publicAddresses('[::ffff:127.0.0.1]')).rejects.toThrow(/not a public address/);
    await expect(publicAddresses('[2606:4700:4700::1111]')).resolves.toEqual([{ address: '2606:4700:4700::1111', family: 6 }]);
  });

  it('only https is fetched', async () => {
    await expect(publicFetch(new URL('http://8.8.8.8/doc.json'))).rejects.toThrow(/https only/);
  });
});
