import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Secrets at rest (decisions H25): values the service must read back in clear (webhook signing
 * secrets: signing needs the key itself, so they cannot be hashed) are stored as
 * `enc:v1:<key id>:<base64url of iv | ciphertext | tag>`, AES-256-GCM under the server key.
 * The key id (the first 8 hex digits of the key's SHA-256) picks the key that opens a value, so
 * after `CAIRN_SECRET_KEY` changes the previous keys (`CAIRN_SECRET_KEY_PREVIOUS`) still open the
 * values `cairn secrets rotate` has not rewritten yet. A value without the prefix (written before
 * encryption existed) is read as is and encrypted by the next rotation.
 */
const PREFIX = 'enc:v1:';
/** Binds a ciphertext to what it is, so a value cannot be moved into another kind of column. */
const AAD = Buffer.from('cairn:secret:v1');

export class SecretKeyError extends Error {}

/** A key given as 64 hex digits or as base64 of 32 bytes. */
export function parseKey(text: string, name: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : /^[A-Za-z0-9+/_-]{42,43}=?$/.test(t) ? Buffer.from(t, 'base64') : null;
  if (key?.length !== 32) {
    throw new SecretKeyError(`${name} must be 32 random bytes written as 64 hex digits or as base64 (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

export const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export class SecretBox {
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  constructor(
    private readonly key: Buffer,
    previous: Buffer[] = [],
  ) {
    this.keyId = keyId(key);
    for (const k of [key, ...previous]) if (!this.keys.has(keyId(k))) this.keys.set(keyId(k), k);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(AAD);
    const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${this.keyId}:${body.toString('base64url')}`;
  }

  decrypt(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [id, data] = stored.slice(PREFIX.length).split(':');
    const key = id ? this.keys.get(id) : undefined;
    if (!key || !data) {
      throw new SecretKeyError(`a secret was encrypted with key ${id}, which this process does not have (CAIRN_SECRET_KEY, CAIRN_SECRET_KEY_PREVIOUS)`);
    }
    const raw = Buffer.from(data, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12)).setAAD(AAD);
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
  }

  /** A MAC of `text` under the current key (22 base64url characters): tokens the service issues and checks itself. */
  sign(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url').slice(0, 22);
  }

  /** Whether a stored value is not yet under the current key (plain, or under a previous key). */
  isStale(stored: string): boolean {
    return !stored.startsWith(`${PREFIX}${this.keyId}:`);
  }
}

export interface SecretKeyConfig {
  /** CAIRN_SECRET_KEY, or null to use (or create) the key file in the data directory. */
  key: string | null;
  /** CAIRN_SECRET_KEY_PREVIOUS: older keys, comma-separated, still accepted for reading. */
  previous: string[];
}

export const KEY_FILE = 'secret.key';

/**
 * The server's secret box. Without CAIRN_SECRET_KEY the key lives in `<data dir>/secret.key`,
 * created (mode 0600) on first start, so a fresh install encrypts without any setting; several
 * instances must then share one CAIRN_SECRET_KEY instead (each would create its own file).
 */
export function loadSecretBox(config: SecretKeyConfig, dataDir: string): { box: SecretBox; source: 'env' | 'file' } {
  const previous = config.previous.map((k, i) => parseKey(k, `CAIRN_SECRET_KEY_PREVIOUS (key ${i + 1})`));
  if (config.key) return { box: new SecretBox(parseKey(config.key, 'CAIRN_SECRET_KEY'), previous), source: 'env' };
  const file = path.join(dataDir, KEY_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(dataDir, { recursive: true });
    text = `${randomBytes(32).toString('base64')}\n`;
    try {
      // `wx`: two processes starting at once never overwrite each other's key.
      fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      text = fs.readFileSync(file, 'utf8');
    }
  }
  return { box: new SecretBox(parseKey(text, file), previous), source: 'file' };
}
