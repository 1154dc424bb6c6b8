import { readFile } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';
import { isbot } from 'isbot';
import type { CityResponse, Reader } from 'maxmind';
import UAParser from 'ua-parser-js';

/**
 * What the collector learns about a visit besides its events (decisions A10; design 1.3 steps
 * 4, 6 and 9): whether it is a bot, where it comes from (an MMDB file, public unicast addresses
 * only), which browser, system and device it runs, and where its page and referrer point.
 */

/** A map that forgets its oldest entry beyond `max` (insertion order; a hit moves to the end). */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as K);
    this.map.set(key, value);
  }
  delete(key: K): void {
    this.map.delete(key);
  }
}

// isbot's one large expression cost about 20 µs a batch (1.4% of a flooded collector's event
// loop); a site's visitors share few user agents.
const botVerdicts = new Lru<string, boolean>(10_000);

export function isBot(userAgent: string | undefined): boolean {
  if (!userAgent) return true;
  let bot = botVerdicts.get(userAgent);
  if (bot === undefined) {
    bot = isbot(userAgent);
    botVerdicts.set(userAgent, bot);
  }
  return bot;
}

export interface Client {
  browser: string | null;
  os: string | null;
  device: 'desktop' | 'mobile' | 'tablet';
}

// ua-parser-js takes ~140 µs a parse under load; a site's visitors share few user agents.
const clients = new Lru<string, Client>(10_000);

export function clientOf(userAgent: string): Client {
  const known = clients.get(userAgent);
  if (known) return known;
  const ua = new UAParser(userAgent).getResult();
  const type = ua.device.type;
  const client: Client = {
    browser: ua.browser.name?.slice(0, 100) ?? null,
    os: ua.os.name?.slice(0, 100) ?? null,
    device: type === 'mobile' || type === 'wearable' ? 'mobile' : type === 'tablet' ? 'tablet' : 'desktop',
  };
  clients.set(userAgent, client);
  return client;
}

export interface Geo {
  country: string | null;
  city: string | null;
}

const NO_GEO: Geo = { country: null, city: null };

/** A record of a MaxMind file (`country.iso_code`, `city.names.en`) or of DB-IP's (`country_code`, `city`). */
interface GeoRecord {
  country?: { iso_code?: string };
  city?: string | { names?: { en?: string } };
  country_code?: string;
}

/**
 * Country and city from the MMDB file at `file`, read on first use (none: always null). Only
 * public unicast addresses are looked up: a file may answer a country for 192.168.1.1.
 */
export class GeoLookup {
  private reader: Promise<Reader<CityResponse> | null> | null = null;
  private readonly cache = new Lru<string, Geo>(50_000);
  constructor(private readonly file: string | null) {}

  private open(): Promise<Reader<CityResponse> | null> {
    if (!this.file) return Promise.resolve(null);
    // maxmind is loaded only by a server that has a database (decisions P20's optional components).
    this.reader ??= Promise.all([readFile(this.file), import('maxmind')]).then(([buf, { Reader: MmdbReader }]) => new MmdbReader<CityResponse>(buf));
    return this.reader;
  }

  async lookup(ip: string): Promise<Geo> {
    if (!this.file) return NO_GEO;
    let addr: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      addr = ipaddr.process(ip);
    } catch {
      return NO_GEO;
    }
    if (addr.range() !== 'unicast') return NO_GEO;
    const key = addr.toString();
    const cached = this.cache.get(key);
    if (cached) return cached;
    const reader = await this.open();
    // maxmind types MaxMind's records only; DB-IP's have their own shape.
    const record = (reader?.get(key) ?? null) as GeoRecord | null;
    const city = typeof record?.city === 'string' ? record.city : record?.city?.names?.en;
    const country = record?.country?.iso_code ?? record?.country_code;
    const geo: Geo = { country: country && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null, city: city ? city.slice(0, 200) : null };
    this.cache.set(key, geo);
    return geo;
  }
}

/** Search engines and social networks, matched on the referrer's host (and its parents) and on utm_source. */
const SEARCH = new Set(
  'google bing.com duckduckgo.com yandex baidu.com ecosia.org search.yahoo.com yahoo.com naver.com seznam.cz qwant.com startpage.com search.brave.com brave.com ask.com aol.com sogou.com so.com yandex.ru ya.ru kagi.com mojeek.com presearch.com metager.de you.com perplexity.ai chatgpt.com search.aol.com lycos.com dogpile.com daum.net coccoc.com petalsearch.com swisscows.com gibiru.com searx.be sapo.pt onet.pl wp.pl'.split(
    ' ',
  ),
);
const SOCIAL = new Set(
  'facebook.com fb.com m.facebook.com l.facebook.com lm.facebook.com t.co twitter.com x.com linkedin.com lnkd.in reddit.com old.reddit.com news.ycombinator.com youtube.com youtu.be bsky.app instagram.com l.instagram.com pinterest.com tiktok.com threads.net mastodon.social vk.com ok.ru weibo.com tumblr.com quora.com telegram.org t.me whatsapp.com discord.com snapchat.com xing.com medium.com substack.com flipboard.com mix.com digg.com'.split(
    ' ',
  ),
);

function listedIn(list: Set<string>, host: string): boolean {
  const labels = host.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const suffix = labels.slice(i).join('.');
    if (list.has(suffix)) return true;
  }
  // `google.de`, `yandex.com.tr`: an engine's name before any public suffix.
  return labels.some((l, i) => i < labels.length - 1 && list.has(l));
}

export type Source = 'direct' | 'search' | 'social' | 'other';

export function sourceOf(referrerHost: string | null, utmSource: string | null): Source {
  const from = [referrerHost, utmSource?.toLowerCase() ?? null].filter((v): v is string => !!v);
  if (!from.length) return 'direct';
  if (from.some((h) => listedIn(SEARCH, h))) return 'search';
  if (from.some((h) => listedIn(SOCIAL, h))) return 'social';
  return 'other';
}

export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
export type Utm = Record<(typeof UTM_KEYS)[number], string | null>;

export interface PageUrl {
  host: string;
  path: string;
  utm: Utm;
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The page a batch happened on, kept without query parameters other than the five utm values
 * and without fragment (so no e-mail address or token in a query string is stored), except the
 * hash of a hash-routed site (`hash`). Trailing slashes are dropped, the path percent-decoded.
 */
export function pageOf(url: URL, hash: boolean): PageUrl {
  let path = decodePath(url.pathname);
  if (path.length > 1) path = path.replace(/\/+$/, '') || '/';
  if (hash && url.hash.length > 1) path += decodePath(url.hash);
  const utm = {} as Utm;
  for (const key of UTM_KEYS) utm[key] = url.searchParams.get(key)?.trim().slice(0, 300) || null;
  return { host: url.host.toLowerCase(), path: path.slice(0, 1000), utm };
}

/** The referrer's host without `www.`; null for none, a non-http(s) URL, or the site's own host. */
export function referrerHostOf(referrer: string | undefined, ownHosts: readonly string[]): string | null {
  if (!referrer) return null;
  let url: URL;
  try {
    url = new URL(referrer);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const host = url.hostname.toLowerCase();
  if (ownHosts.includes(url.host.toLowerCase()) || ownHosts.includes(host)) return null;
  return host.replace(/^www\./, '').slice(0, 255) || null;
}

/** A path glob of the settings (`*` one segment, `**` anything) as a regular expression. */
export function globToRegExp(glob: string): RegExp {
  // `/admin/**` covers `/admin` itself too.
  const under = glob.endsWith('/**');
  const body = (under ? glob.slice(0, -3) : glob)
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(under ? `^${body}(?:/.*)?$` : `^${body}/?$`);
}

export type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** `203.0.113.0/24`, `2001:db8::/32` or one address (its /32 or /128), parsed once per settings read. */
export function parseRange(entry: string): Range {
  if (entry.includes('/')) return ipaddr.parseCIDR(entry);
  const addr = ipaddr.process(entry);
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** Whether `ip` is in one of the ranges (an IPv4-mapped IPv6 address counts as its IPv4 address). */
export function inRanges(ip: string, ranges: readonly Range[]): boolean {
  if (!ranges.length) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match([net, bits] as never));
}
