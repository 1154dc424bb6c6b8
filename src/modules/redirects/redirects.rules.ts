import { createHash } from 'node:crypto';
import RE2 from 're2';
import { AppError, invalid } from '../../shared/errors.js';
import { CONTROL_OR_SPACE } from '../../shared/formats.js';

/** Hops a chain of redirects may have, the new one included (decisions R2). */
export const MAX_HOPS = 5;

/** One active rule as the matcher holds it. */
export interface Rule {
  id: number;
  sourcePath: string;
  targetUrl: string;
  statusCode: number;
  isRegex: boolean;
  preserveQueryString: boolean;
  /** Compiled once when the site's rules are loaded (RE2: linear time, decisions R1). */
  regex?: RE2;
}

export interface Match {
  rule: Rule;
  /** The target with capture groups and, when the rule says so, the query string applied. */
  targetUrl: string;
}

/** `/a/b/?x=1#f` -> path `/a/b/`, query `x=1`. */
export function splitPath(path: string): { path: string; query: string } {
  const hash = path.indexOf('#');
  const withoutHash = hash >= 0 ? path.slice(0, hash) : path;
  const q = withoutHash.indexOf('?');
  return q >= 0 ? { path: withoutHash.slice(0, q), query: withoutHash.slice(q + 1) } : { path: withoutHash, query: '' };
}

/**
 * The key exact rules match on (decisions R3): the path without query string or fragment,
 * percent-decoded where that is valid UTF-8, without a trailing slash (except `/` itself).
 * Case-sensitive, as paths are.
 */
export function exactKey(path: string): string {
  let p = splitPath(path).path;
  try {
    p = decodeURI(p);
  } catch {
    // Malformed escapes stay as they were: still a key, just never equal to a decoded one.
  }
  return p.length > 1 && p.endsWith('/') ? p.replace(/\/+$/, '') || '/' : p;
}

/** The unique key of a rule's source: the exact key, or the pattern as written. */
export function sourceHash(sourcePath: string, isRegex: boolean): string {
  return createHash('sha256')
    .update(isRegex ? `re:${sourcePath}` : `path:${exactKey(sourcePath)}`)
    .digest('hex');
}

/** Compiles a pattern or answers 422 PATTERN_INVALID on `sourcePath` (RE2 refuses backreferences and lookaround). */
export function compilePattern(pattern: string, field = 'sourcePath'): RE2 {
  try {
    return new RE2(pattern);
  } catch (err) {
    throw invalid('PATTERN_INVALID', field, `The pattern is not a valid RE2 regular expression: ${(err as Error).message}.`);
  }
}

/** Any control character: a path holding one (a newline above all) could split a header or a log line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `$1`-`$9` in a target: the capture groups a regex rule inserts. */
const CAPTURE_REF = /\$(\d)/g;

/** The number of capture groups a pattern holds (RE2 answers every group, matched or not, for the empty alternative). */
export function groupCount(pattern: RE2 | string): number {
  const source = typeof pattern === 'string' ? pattern : pattern.source;
  return new RE2(`(?:${source})|`).exec('')!.length - 1;
}

/**
 * Whether a target, as stored or as resolved with captures, is one the rules allow: an http(s)
 * URL with a host, or a path on the site with one leading slash (never `//host` nor `/\\host`,
 * which browsers read as another host), and no spaces or control characters.
 */
export function isAllowedTarget(t: string): boolean {
  const isPath = t.startsWith('/') && !/^\/[/\\]/.test(t);
  return (isPath || /^https?:\/\/[^\s/?#\\]+/i.test(t)) && !CONTROL_OR_SPACE.test(t);
}

/** The scheme and host of an absolute target (`https://a.test`), or null for a path. */
function originOf(t: string): string | null {
  const m = /^https?:\/\/[^/?#\\]*/i.exec(t);
  return m ? m[0].toLowerCase() : null;
}

/** Checks a rule's source and target as written; throws the 422 naming the field. */
export function checkRule(input: { sourcePath: string; targetUrl: string; isRegex: boolean }): void {
  if (CONTROL.test(input.sourcePath)) {
    throw invalid('SOURCE_PATH_INVALID', 'sourcePath', 'The source must not contain control characters (a newline, a tab).');
  }
  if (input.isRegex) compilePattern(input.sourcePath);
  else if (!input.sourcePath.startsWith('/') || input.sourcePath.startsWith('//')) throw invalid('SOURCE_PATH_INVALID', 'sourcePath');
  const t = input.targetUrl;
  if (!isAllowedTarget(t)) {
    throw CONTROL_OR_SPACE.test(t)
      ? invalid('TARGET_INVALID', 'targetUrl', 'The target must not contain spaces or control characters.')
      : invalid('TARGET_INVALID', 'targetUrl');
  }
  if (!input.isRegex) return;
  const refs = [...t.matchAll(CAPTURE_REF)].map((m) => Number(m[1]));
  if (!refs.length) return;
  const groups = groupCount(input.sourcePath);
  const missing = refs.find((n) => n > groups || n === 0);
  if (missing !== undefined) {
    throw invalid('TARGET_INVALID', 'targetUrl', `The target inserts $${missing}, but the pattern has ${groups} capture group${groups === 1 ? '' : 's'}.`);
  }
  // A capture may fill the path, query or fragment; in the scheme or host it would let a visitor pick where the redirect goes.
  const origin = originOf(t);
  if (origin?.includes('$')) throw invalid('TARGET_INVALID', 'targetUrl', 'Capture groups may fill the path, query or fragment of the target, not its host.');
}

function applyCaptures(target: string, groups: readonly (string | undefined)[]): string {
  return target.replace(CAPTURE_REF, (_, d: string) => groups[Number(d)] ?? '');
}

/**
 * A regex rule's target with the request's captures applied, or null when the result breaks
 * the target rules (`/$1` made `//evil.test/x` or `/\\evil.test`) or leaves the target's host:
 * the rule then does not apply to that path.
 */
function resolvedTarget(rule: Rule, groups: readonly (string | undefined)[]): string | null {
  const target = applyCaptures(rule.targetUrl, groups);
  if (target === rule.targetUrl) return target;
  if (!isAllowedTarget(target) || originOf(target) !== originOf(rule.targetUrl)) return null;
  return target;
}

function withQuery(target: string, query: string): string {
  if (!query) return target;
  const hash = target.indexOf('#');
  const base = hash >= 0 ? target.slice(0, hash) : target;
  const fragment = hash >= 0 ? target.slice(hash) : '';
  return `${base}${base.includes('?') ? '&' : '?'}${query}${fragment}`;
}

/**
 * A site's active rules, compiled: exact ones in a hash map, regex ones in one RE2 set tried in
 * a single pass, the first by id winning (decisions R1). Built once per site and kept until the
 * site's rules change (redirects.cache.ts).
 */
export class RuleSet {
  readonly exact = new Map<string, Rule>();
  readonly regex: Rule[] = [];
  private set: InstanceType<typeof RE2.Set> | null = null;
  /** Exact key of each target on the site -> the rules pointing there; built for loop checks only. */
  private byTarget: Map<string, Rule[]> | null = null;

  /**
   * `targetsOn`: the site's domain, for a set that loop checks will ask (`targetingKey`): the
   * target index is then kept from the first rule on, as rules are added (a sliced load), where
   * built on the first question it was one block over every rule (200 ms and more at 100,000
   * rules, every other site waiting; decisions HN19).
   */
  constructor(rules: Iterable<Rule>, targetsOn?: string) {
    if (targetsOn !== undefined) {
      this.byTarget = new Map();
      this.domain = targetsOn;
    }
    for (const rule of rules) this.add(rule);
  }

  add(rule: Rule): void {
    if (this.byTarget) this.indexTarget(rule);
    if (rule.isRegex) {
      rule.regex ??= compilePattern(rule.sourcePath);
      this.regex.push(rule);
      this.set = null;
    } else if (!this.exact.has(exactKey(rule.sourcePath))) {
      this.exact.set(exactKey(rule.sourcePath), rule);
    }
  }

  /** Takes out the rule with this id, if held (an update's old self). */
  remove(id: number): void {
    let held = this.regex.find((r) => r.id === id);
    for (const rule of this.exact.values()) if (rule.id === id) held = rule;
    if (held) this.delete(held);
  }

  /**
   * Takes out a rule `add` was given (an import's candidate that failed its checks), the target
   * index kept: it was dropped and built again over every rule, once per refused row (HN19).
   */
  delete(rule: Rule): void {
    if (rule.isRegex) {
      const at = this.regex.indexOf(rule);
      if (at >= 0) {
        this.regex.splice(at, 1);
        this.set = null;
      }
    } else if (this.exact.get(exactKey(rule.sourcePath)) === rule) this.exact.delete(exactKey(rule.sourcePath));
    const lands = this.byTarget ? pathOnSite(rule.targetUrl, this.domain) : null;
    const list = lands === null ? undefined : this.byTarget!.get(exactKey(lands));
    if (list?.includes(rule)) list.splice(list.indexOf(rule), 1);
  }

  all(): Rule[] {
    return [...this.exact.values(), ...this.regex];
  }

  /** The rules whose target, on the site of `domain`, has this exact key. */
  targetingKey(key: string, domain: string): Rule[] {
    if (!this.byTarget || this.domain !== domain) {
      this.byTarget = new Map();
      this.domain = domain;
      for (const rule of this.all()) this.indexTarget(rule);
    }
    return this.byTarget.get(key) ?? [];
  }

  private domain = '';

  private indexTarget(rule: Rule): void {
    const lands = pathOnSite(rule.targetUrl, this.domain);
    if (lands === null || !this.byTarget) return;
    const k = exactKey(lands);
    const list = this.byTarget.get(k);
    if (list) list.push(rule);
    else this.byTarget.set(k, [rule]);
  }

  get size(): number {
    return this.exact.size + this.regex.length;
  }

  /** The rule a request path (with its query string) matches, exact first, and its target. */
  match(requestPath: string): Match | null {
    const { path, query } = splitPath(requestPath);
    const exact = this.exact.get(exactKey(path));
    if (exact) return { rule: exact, targetUrl: exact.preserveQueryString ? withQuery(exact.targetUrl, query) : exact.targetUrl };
    if (!this.regex.length) return null;
    if (!this.set) {
      // Sorted by id so the set's lowest index is the oldest matching rule.
      this.regex.sort((a, b) => a.id - b.id);
      this.set = new RE2.Set(
        this.regex.map((r) => r.sourcePath),
        'u',
      );
    }
    const hits = this.set.match(path);
    if (!hits.length) return null;
    const rule = this.regex[Math.min(...hits)]!;
    const groups = rule.regex!.exec(path);
    const target = resolvedTarget(rule, groups ? [...groups] : []);
    if (target === null) return null;
    return { rule, targetUrl: rule.preserveQueryString ? withQuery(target, query) : target };
  }
}

/** The path on the site a target leads to, or null when it leaves the site. */
export function pathOnSite(target: string, domain: string): string | null {
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    const host = url.hostname.toLowerCase();
    const site = domain.toLowerCase();
    return host === site || host === `www.${site}` || `www.${host}` === site ? `${url.pathname}${url.search}` : null;
  } catch {
    return null;
  }
}

/**
 * Refuses a rule that would loop or make a chain over MAX_HOPS (decisions R2), given the site's
 * other active rules and the candidate (already in `rules`). Existing rules passed this check,
 * so a new loop or long chain runs through the candidate: follow it forward, and find the
 * longest way into it backward.
 */
export function checkChain(rules: RuleSet, candidate: Rule, domain: string): void {
  // Forward: where the candidate's target leads.
  let forward = 0;
  let at = pathOnSite(candidate.targetUrl, domain);
  const probe = candidate.isRegex ? null : candidate.sourcePath;
  if (candidate.isRegex && /\$\d/.test(candidate.targetUrl)) {
    // A regex rule's target depends on what it matched: it is not followed as one chain, but
    // it may not catch its own targets (`^/(.*)$` -> `/$1` maps a path to itself, `^/q(.*)$`
    // -> `/qq$1` grows it for ever).
    checkCapturesSettle(rules, candidate, domain);
    at = null;
  }
  while (at !== null) {
    const next = rules.match(at);
    if (!next) break;
    if (next.rule.id === candidate.id) throw loop(probe);
    forward += 1;
    if (1 + forward > MAX_HOPS) throw tooLong();
    at = pathOnSite(next.targetUrl, domain);
  }
  // Backward: rules whose target lands on the candidate, and the rules before those.
  const backward = depthInto(rules, candidate, domain, 0, new Set([candidate.id]));
  if (backward + 1 + forward > MAX_HOPS) throw tooLong();
}

/** What the capture groups are filled with to see where a regex rule's targets lead. */
const CAPTURE_SAMPLES = ['', 'x', '1', 'x-1', 'x/1'];

/**
 * Refuses a regex rule whose targets it catches again, followed from each sample target through
 * the site's rules: a target that comes back to this rule loops or grows without end.
 */
function checkCapturesSettle(rules: RuleSet, candidate: Rule, domain: string): void {
  for (const sample of CAPTURE_SAMPLES) {
    let at = pathOnSite(applyCaptures(candidate.targetUrl, Array(10).fill(sample)), domain);
    for (let hop = 0; at !== null && hop < MAX_HOPS; hop++) {
      const next = rules.match(at);
      if (!next) break;
      if (next.rule.id === candidate.id) throw loop(null);
      at = pathOnSite(next.targetUrl, domain);
    }
  }
}

/** Rules whose target lands on `rule`: by the target index for an exact rule, by testing targets for a regex one. */
function rulesInto(rules: RuleSet, rule: Rule, domain: string): Rule[] {
  if (!rule.isRegex) return rules.targetingKey(exactKey(rule.sourcePath), domain).filter((r) => !(r.isRegex && /\$\d/.test(r.targetUrl)));
  const out: Rule[] = [];
  for (const other of rules.all()) {
    if (other.isRegex && /\$\d/.test(other.targetUrl)) continue;
    const lands = pathOnSite(other.targetUrl, domain);
    if (lands !== null && rule.regex!.test(splitPath(lands).path) && rules.match(lands)?.rule.id === rule.id) out.push(other);
  }
  return out;
}

function depthInto(rules: RuleSet, rule: Rule, domain: string, depth: number, seen: Set<number>): number {
  if (depth >= MAX_HOPS) return depth;
  let best = depth;
  for (const other of rulesInto(rules, rule, domain)) {
    if (seen.has(other.id)) continue;
    seen.add(other.id);
    best = Math.max(best, depthInto(rules, other, domain, depth + 1, seen));
    seen.delete(other.id);
    if (best >= MAX_HOPS) break;
  }
  return best;
}

const loop = (source: string | null) =>
  new AppError('REDIRECT_LOOP', {
    message: `The redirect would loop${source ? ` back to ${source}` : ''}.`,
    errors: { targetUrl: ['The redirect would loop back to where it started.'] },
  });
const tooLong = () => invalid('REDIRECT_CHAIN_TOO_LONG', 'targetUrl', `The redirect would make a chain of more than ${MAX_HOPS} redirects.`);
