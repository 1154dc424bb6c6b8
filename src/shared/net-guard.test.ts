import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedAddressError, checkOutboundUrl, guardedLookup, isPublicAddress, resolvePublic, type LookupAll } from './net-guard.js';

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, metadata, CGNAT, multicast, unspecified, broadcast and reserved IPv4', () => {
    for (const ip of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '169.254.0.1',
      '100.64.0.1',
      '100.127.255.254',
      '224.0.0.1',
      '239.255.255.250',
      '0.0.0.0',
      '0.1.2.3',
      '255.255.255.255',
      '240.0.0.1',
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '198.18.0.1',
      '192.0.0.8',
    ])
      expect(isPublicAddress(ip), ip).toBe(false);
  });

  it('refuses IPv6 loopback, unspecified, link-local, unique-local, multicast, documentation, NAT64, 6to4, Teredo and IPv4-compatible', () => {
    for (const ip of [
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      'ff0e::1',
      '2001:db8::1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '2001:0:4136:e378::1',
      '::7f00:1',
      '::127.0.0.1',
      'fec0::1',
      '100::1',
    ])
      expect(isPublicAddress(ip), ip).toBe(false);
  });

  it('judges an IPv4-mapped IPv6 address as the IPv4 address it maps', () => {
    for (const ip of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:192.168.0.1', '[::ffff:127.0.0.1]']) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
    expect(isPublicAddress('::ffff:93.184.216.34')).toBe(true);
  });

  it('accepts public unicast addresses of both families', () => {
    for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) {
      expect(isPublicAddress(ip), ip).toBe(true);
    }
  });

  it('refuses anything that is not a canonical address', () => {
    for (const ip of ['', 'localhost', '2130706433', '0x7f.0.0.1', '127.1', '1.2.3.4.5', 'example.com']) expect(isPublicAddress(ip), ip).toBe(false);
  });
});

describe('resolvePublic', () => {
  const fake =
    (map: Record<string, string[]>): LookupAll =>
    async (host) => {
      const list = map[host];
      if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

  it('refuses a name when any of its addresses is not public', async () => {
    const lookupAll = fake({ 'mixed.test': ['93.184.216.34', '10.0.0.5'], 'good.test': ['93.184.216.34', '2606:4700::1'] });
    await expect(resolvePublic('mixed.test', { allowPrivate: false, lookupAll })).rejects.toBeInstanceOf(BlockedAddressError);
    await expect(resolvePublic('good.test', { allowPrivate: false, lookupAll })).resolves.toHaveLength(2);
    await expect(resolvePublic('mixed.test', { allowPrivate: true, lookupAll })).resolves.toHaveLength(2);
  });

  it('checks IP literals without resolving them, brackets included', async () => {
    const lookupAll: LookupAll = async () => {
      throw new Error('must not resolve');
    };
    await expect(resolvePublic('127.0.0.1', { allowPrivate: false, lookupAll })).rejects.toBeInstanceOf(BlockedAddressError);
    await expect(resolvePublic('[::1]', { allowPrivate: false, lookupAll })).rejects.toBeInstanceOf(BlockedAddressError);
    await expect(resolvePublic('8.8.8.8', { allowPrivate: false, lookupAll })).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
  });

  it('refuses localhost through the real resolver', async () => {
    await expect(resolvePublic('localhost', { allowPrivate: false })).rejects.toBeInstanceOf(BlockedAddressError);
  });
});

describe('checkOutboundUrl', () => {
  it('accepts only absolute http(s) URLs', async () => {
    for (const raw of ['ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', '/relative', 'gopher://x']) {
      expect((await checkOutboundUrl(raw, { allowPrivate: true })).ok, raw).toBe(false);
    }
    expect((await checkOutboundUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).ok).toBe(true);
  });

  it('refuses private hosts unless allowed, whatever their spelling', async () => {
    for (const raw of [
      'http://127.0.0.1/',
      'http://localhost:8080/',
      'http://[::1]/',
      'http://2130706433/',
      'http://0x7f.1/',
      'https://169.254.169.254/latest',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      const res = await checkOutboundUrl(raw, { allowPrivate: false });
      expect(res.ok, raw).toBe(false);
    }
    const unresolvable = await checkOutboundUrl('http://does-not-exist.invalid/', {
      allowPrivate: false,
      lookupAll: async () => {
        throw new Error('ENOTFOUND');
      },
    });
    expect(unresolvable).toEqual({ ok: false, reason: expect.stringContaining('does not resolve') });
  });
});

describe('guardedLookup with http.request', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function get(host: string, lookup: ReturnType<typeof guardedLookup>): Promise<string> {
    return new Promise((resolve, reject) => {
      // agent: false: a pooled keep-alive socket would skip the lookup (and so the check) altogether.
      const req = http.request({ host, port, path: '/', lookup: lookup as never, agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('connects to the checked address when private networks are allowed', async () => {
    expect(await get('localhost', guardedLookup({ allowPrivate: true }))).toBe('ok');
  });

  it('refuses to connect when the name resolves to a private address', async () => {
    await expect(get('localhost', guardedLookup({ allowPrivate: false }))).rejects.toMatchObject({ code: 'EBLOCKEDADDRESS' });
  });

  it('resolves once per connection, so a rebinding answer after the check cannot redirect the socket', async () => {
    // First answer public, then loopback: the guard checks and hands over the same answer it resolved.
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    let calls = 0;
    const lookupAll: LookupAll = async () => (answers[Math.min(calls++, 1)] ?? []).map((address) => ({ address, family: 4 }));
    const seen: unknown[] = [];
    const lookup = guardedLookup({ allowPrivate: false, lookupAll });
    await new Promise<void>((resolve) =>
      lookup('rebind.test', { all: true }, (err, addresses) => {
        seen.push(err ?? addresses);
        resolve();
      }),
    );
    await new Promise<void>((resolve) =>
      lookup('rebind.test', { all: true }, (err, addresses) => {
        seen.push(err ?? addresses);
        resolve();
      }),
    );
    expect(seen[0]).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(seen[1]).toBeInstanceOf(BlockedAddressError);
    expect(calls).toBe(2);
  });

  it('answers in the single-address form when not asked for all, filtered by family', async () => {
    const lookupAll: LookupAll = async () => [
      { address: '2606:4700::1', family: 6 },
      { address: '93.184.216.34', family: 4 },
    ];
    const lookup = guardedLookup({ allowPrivate: false, lookupAll });
    const out = await new Promise<unknown[]>((resolve) => lookup('dual.test', { family: 4 }, (...args) => resolve(args)));
    expect(out).toEqual([null, '93.184.216.34', 4]);
  });
});
