import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config.js';

describe('configuration from the environment', () => {
  it('has working defaults: SQLite under ./data, port 3000 on 127.0.0.1, private networks refused', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.databaseUrl).toBe(path.resolve('data/cairn.db'));
    expect(c.redisUrl).toBeNull();
    expect(c.allowPrivateNetwork).toBe(false);
    expect(c.publicUrl).toBe('http://127.0.0.1:3000');
  });

  it('reads every setting', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/cairn',
      CAIRN_DATA_DIR: '/srv/cairn',
      REDIS_URL: 'redis://cache:6379',
      PUBLIC_URL: 'https://cms.example.com/',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_PUBLIC_MAX: '10',
      RATE_LIMIT_WINDOW_MS: '30000',
      CAIRN_ALLOW_PRIVATE_NETWORK: 'true',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/cairn',
      dataDir: '/srv/cairn',
      redisUrl: 'redis://cache:6379',
      publicUrl: 'https://cms.example.com',
      logLevel: 'debug',
      rateLimit: { max: 100, publicMax: 10, windowMs: 30000 },
      allowPrivateNetwork: true,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ PUBLIC_URL: 'not a url' }, /PUBLIC_URL/],
    [{ DATABASE_URL: 'mysql://x/y' }, /DATABASE_URL/],
    [{ CAIRN_ALLOW_PRIVATE_NETWORK: 'maybe' }, /CAIRN_ALLOW_PRIVATE_NETWORK/],
    [{ RATE_LIMIT_MAX: '0' }, /RATE_LIMIT_MAX/],
  ])('refuses %o with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
