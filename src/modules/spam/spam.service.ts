import ipaddr from 'ipaddr.js';
import { Type, type Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { AppError, invalid } from '../../shared/errors.js';
import { checkOutboundUrl } from '../../shared/net-guard.js';
import { postGuarded } from '../../shared/outbound.js';
import { Nullable } from '../../shared/schemas.js';
import type { SecretBox } from '../../shared/secrets.js';
import * as repo from './spam.repository.js';

/**
 * Spam settings per site (spam.settings.view / .update): blocked words, blocked addresses and a
 * captcha provider (decisions F10). Form submissions ask `screen` before anything is stored.
 */
export const CAPTCHA_PROVIDERS = {
  turnstile: { verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify', field: 'cf-turnstile-response' },
  hcaptcha: { verifyUrl: 'https://api.hcaptcha.com/siteverify', field: 'h-captcha-response' },
  recaptcha: { verifyUrl: 'https://www.google.com/recaptcha/api/siteverify', field: 'g-recaptcha-response' },
} as const;
type Provider = keyof typeof CAPTCHA_PROVIDERS;
/** The field a captcha answer comes in: `captchaToken`, or what the provider's widget adds to an HTML form. */
export const CAPTCHA_TOKEN_FIELD = 'captchaToken';
const CAPTCHA_TIMEOUT_MS = 5000;
const MAX_ENTRIES = 500;

const ProviderSchema = Type.Unsafe<Provider>({ type: 'string', enum: Object.keys(CAPTCHA_PROVIDERS), description: 'turnstile, hcaptcha or recaptcha' });
export const SpamSettings = Type.Object({
  blockedWords: Type.Array(Type.String(), { description: 'A submission whose text holds one of these (any case) is stored as spam' }),
  blockedAddresses: Type.Array(Type.String(), { description: 'IP addresses or CIDR ranges whose submissions are refused (403)' }),
  captchaProvider: Nullable(ProviderSchema),
  captchaSiteKey: Nullable(Type.String({ description: "The provider's public site key, for the form's widget" })),
  captchaVerifyUrl: Nullable(Type.String({ description: "Where answers are verified (the provider's siteverify URL unless set)" })),
  captchaSecretSet: Type.Boolean({ description: 'Whether a secret is stored (it is never shown)' }),
});
export const SpamSettingsUpdate = Type.Object(
  {
    blockedWords: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: MAX_ENTRIES })),
    blockedAddresses: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: MAX_ENTRIES })),
    captchaProvider: Type.Optional(Nullable(ProviderSchema)),
    captchaSiteKey: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    captchaSecret: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500, description: 'Write-only; stored encrypted' }))),
    captchaVerifyUrl: Type.Optional(
      Nullable(Type.String({ maxLength: 2048, description: "An http(s) URL that resolves to public addresses; null for the provider's" })),
    ),
  },
  { minProperties: 1 },
);

export async function getSettings(db: Executor, siteId: string): Promise<Static<typeof SpamSettings>> {
  const row = await repo.findSettings(db, siteId);
  const provider = (row?.captcha_provider ?? null) as Provider | null;
  return {
    blockedWords: parseJson<string[]>(row?.blocked_words, []),
    blockedAddresses: parseJson<string[]>(row?.blocked_addresses, []),
    captchaProvider: provider,
    captchaSiteKey: row?.captcha_site_key ?? null,
    captchaVerifyUrl: row?.captcha_verify_url ?? (provider ? CAPTCHA_PROVIDERS[provider].verifyUrl : null),
    captchaSecretSet: Boolean(row?.captcha_secret),
  };
}

/** `203.0.113.0/24` or one address (stored as its /32 or /128); 422 with the entry's path otherwise. */
function rangeOf(entry: string, path: string): string {
  const text = entry.trim();
  try {
    if (text.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      return `${addr.toString()}/${bits}`;
    }
    const addr = ipaddr.process(text);
    return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    throw invalid('VALIDATION_FAILED', path, `"${entry}" is not an IP address or a CIDR range`);
  }
}

export async function updateSettings(db: Executor, secrets: SecretBox, allowPrivateNetwork: boolean, siteId: string, input: Static<typeof SpamSettingsUpdate>) {
  const row = await repo.findSettings(db, siteId);
  const words = input.blockedWords?.map((w) => w.trim().toLowerCase()).filter(Boolean);
  const ranges = input.blockedAddresses?.map((a, i) => rangeOf(a, `blockedAddresses[${i}]`));
  if (input.captchaVerifyUrl) {
    const check = await checkOutboundUrl(input.captchaVerifyUrl, { allowPrivate: allowPrivateNetwork });
    if (!check.ok) throw invalid('VALIDATION_FAILED', 'captchaVerifyUrl', check.reason);
  }
  await repo.saveSettings(db, {
    site_id: siteId,
    blocked_words: toJson(words ? [...new Set(words)] : parseJson<string[]>(row?.blocked_words, [])),
    blocked_addresses: toJson(ranges ? [...new Set(ranges)] : parseJson<string[]>(row?.blocked_addresses, [])),
    captcha_provider: input.captchaProvider !== undefined ? input.captchaProvider : (row?.captcha_provider ?? null),
    captcha_site_key: input.captchaSiteKey !== undefined ? input.captchaSiteKey : (row?.captcha_site_key ?? null),
    captcha_secret:
      input.captchaSecret !== undefined ? (input.captchaSecret === null ? null : secrets.encrypt(input.captchaSecret)) : (row?.captcha_secret ?? null),
    captcha_verify_url: input.captchaVerifyUrl !== undefined ? input.captchaVerifyUrl : (row?.captcha_verify_url ?? null),
    updated_at: now(),
  });
  return getSettings(db, siteId);
}

/** What a form shows for its captcha widget: the provider and its public site key, when the site has one. */
export async function publicCaptcha(db: Executor, siteId: string): Promise<{ provider: Provider; siteKey: string | null } | null> {
  const row = await repo.findSettings(db, siteId);
  return row?.captcha_provider ? { provider: row.captcha_provider as Provider, siteKey: row.captcha_site_key } : null;
}

export interface ScreenInput {
  siteId: string;
  ip: string | null;
  values: Record<string, unknown>;
  /** The form asks for the site's captcha. */
  captcha: boolean;
}

function addressBlocked(ip: string | null, ranges: string[]): boolean {
  if (!ip || !ranges.length) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  return ranges.some((r) => {
    const [net, bits] = ipaddr.parseCIDR(r);
    return net.kind() === addr.kind() && addr.match([net, bits] as never);
  });
}

const textsOf = (values: Record<string, unknown>) =>
  Object.values(values)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v): v is string => typeof v === 'string')
    .join('\n')
    .toLowerCase();

async function verifyCaptcha(secrets: SecretBox, allowPrivateNetwork: boolean, row: repo.SpamSettingsRow, token: string, ip: string | null): Promise<boolean> {
  const provider = row.captcha_provider as Provider;
  const url = row.captcha_verify_url ?? CAPTCHA_PROVIDERS[provider].verifyUrl;
  const body = new URLSearchParams({
    secret: row.captcha_secret ? secrets.decrypt(row.captcha_secret) : '',
    response: token,
    ...(ip ? { remoteip: ip } : {}),
  }).toString();
  const res = await postGuarded(url, { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body, {
    timeoutMs: CAPTCHA_TIMEOUT_MS,
    allowPrivateNetwork,
  });
  if (!res.ok) throw new AppError('CAPTCHA_UNAVAILABLE', { message: `The captcha could not be verified (${res.error ?? 'no answer'}); try again.` });
  try {
    return (JSON.parse(res.bodyExcerpt ?? '') as { success?: unknown }).success === true;
  } catch {
    throw new AppError('CAPTCHA_UNAVAILABLE', { message: 'The captcha service answered something other than JSON; try again.' });
  }
}

/**
 * A submission's screening (decisions F10), before anything is stored: an address in a blocked
 * range is a 403 `SUBMISSION_BLOCKED`; with the form's captcha on and the site's provider set, a
 * missing or refused answer is a 422 `CAPTCHA_FAILED` (a provider that cannot be reached: 503);
 * text holding a blocked word makes it spam. Returns whether it is spam.
 */
export async function screen(db: Executor, secrets: SecretBox, allowPrivateNetwork: boolean, input: ScreenInput): Promise<{ spam: boolean }> {
  const row = await repo.findSettings(db, input.siteId);
  if (!row) return { spam: false };
  if (addressBlocked(input.ip, parseJson<string[]>(row.blocked_addresses, []))) throw new AppError('SUBMISSION_BLOCKED');
  if (input.captcha && row.captcha_provider) {
    const provider = row.captcha_provider as Provider;
    const token = input.values[CAPTCHA_TOKEN_FIELD] ?? input.values[CAPTCHA_PROVIDERS[provider].field];
    if (typeof token !== 'string' || !token || token.length > 4096) throw invalid('CAPTCHA_FAILED', CAPTCHA_TOKEN_FIELD, 'The captcha answer is missing.');
    if (!(await verifyCaptcha(secrets, allowPrivateNetwork, row, token, input.ip))) throw invalid('CAPTCHA_FAILED', CAPTCHA_TOKEN_FIELD);
  }
  const words = parseJson<string[]>(row.blocked_words, []);
  if (!words.length) return { spam: false };
  const text = textsOf(input.values);
  return { spam: words.some((w) => text.includes(w)) };
}
