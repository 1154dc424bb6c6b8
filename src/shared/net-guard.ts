import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The outbound-request guard (SSRF): webhook deliveries (and later upload-from-url, decisions M2)
 * may reach only public addresses. Every address a name resolves to must be public, and the
 * connection goes to an address that was checked: `guardedLookup` is handed to http.request as
 * its `lookup`, so the name is resolved once, checked, and connected to, with no second
 * resolution that a DNS-rebinding answer could change in between.
 * `allowPrivate` (CAIRN_ALLOW_PRIVATE_NETWORK) lifts the address check, for tests and closed networks.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (dns.lookup with `all: true`); replaceable in tests. */
export type LookupAll = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardOptions {
  allowPrivate: boolean;
  lookupAll?: LookupAll;
}

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(message: string) {
    super(message);
    this.name = 'BlockedAddressError';
  }
}

const defaultLookupAll: LookupAll = async (hostname) => {
  const list = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Whether an IP address is public: IPv4 outside loopback, private (RFC 1918), link-local (which
 * holds the 169.254.169.254 metadata address), carrier-grade NAT, multicast, unspecified,
 * broadcast and reserved ranges; IPv6 only in global unicast (2000::/3) and outside its special
 * ranges (NAT64, 6to4 and Teredo embed IPv4 addresses, documentation, ...). An IPv4-mapped IPv6
 * address (::ffff:127.0.0.1) is judged as the IPv4 address it maps. Anything unparsable is not public.
 */
export function isPublicAddress(ip: string): boolean {
  const text = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(text) || net.isIP(text) === 0) return false;
  let addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return addr.range() === 'unicast';
  const v6 = addr as ipaddr.IPv6;
  return v6.range() === 'unicast' && v6.match(IPV6_GLOBAL_UNICAST);
}

/** The host of a URL without the brackets of an IPv6 literal. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * Resolves `hostname` and returns its addresses when every one is public (or `allowPrivate`);
 * throws BlockedAddressError otherwise, and the resolver's error when the name does not resolve.
 */
export async function resolvePublic(hostname: string, options: GuardOptions): Promise<ResolvedAddress[]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const family = net.isIP(host);
  const addresses: ResolvedAddress[] = family ? [{ address: host, family: family as 4 | 6 }] : await (options.lookupAll ?? defaultLookupAll)(host);
  if (addresses.length === 0) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
  if (!options.allowPrivate) {
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked) throw new BlockedAddressError(`${host} resolves to ${blocked.address}, which is not a public address`);
  }
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request / net.connect: resolves through `resolvePublic` and hands the
 * socket only checked addresses (all of them when asked for `all`, as Node's family
 * auto-selection does; else the first of the requested family).
 */
export function guardedLookup(options: GuardOptions) {
  return (hostname: string, opts: dns.LookupOptions, callback: LookupCallback): void => {
    resolvePublic(hostname, options).then(
      (addresses) => {
        const wanted = opts.family === 4 || opts.family === 6 ? addresses.filter((a) => a.family === opts.family) : addresses;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no IPv${opts.family} address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        if (opts.all)
          callback(
            null,
            wanted.map((a) => ({ address: a.address, family: a.family })),
          );
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Whether `raw` is an absolute http(s) URL whose host resolves only to public addresses (or
 * `allowPrivate`, in which case the name is not resolved at all). Used when a URL is saved; the
 * sender checks again at every request through `guardedLookup`.
 */
export async function checkOutboundUrl(raw: string, options: GuardOptions): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'must use http or https' };
  if (!url.hostname) return { ok: false, reason: 'must name a host' };
  if (options.allowPrivate) return { ok: true, url };
  try {
    await resolvePublic(urlHost(url), options);
    return { ok: true, url };
  } catch (err) {
    if (err instanceof BlockedAddressError)
      return { ok: false, reason: 'must resolve to public addresses only (no loopback, private, link-local or metadata addresses)' };
    return { ok: false, reason: `host ${urlHost(url)} does not resolve` };
  }
}
