import { describe, expect, it } from 'vitest';
import { createSiteWithToken } from '../../../test/helpers/app.js';
import { client, expectErrorShape, type Client, expect422, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { describeTranslations, useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const site = ctx.site;
async function siteWithId(locales?: string[]) {
  const api = await site(locales);
  return { api, siteId: api.siteId };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const TIMESTAMP = ISO_TIMESTAMP;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /v1/variables', () => {
  it('creates a text variable (201) with the default type, the default locale and a new translation group', async () => {
    const api = await site();
    const res = await api.post('/v1/variables', { key: 'site.phone', label: 'Phone', value: '+49 30 1234567' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.any(Number),
        key: 'site.phone',
        label: 'Phone',
        value: '+49 30 1234567',
        type: 'text',
        description: null,
        locale: 'en',
        translationGroup: expect.stringMatching(UUID),
        createdAt: expect.stringMatching(TIMESTAMP),
        updatedAt: expect.stringMatching(TIMESTAMP),
      },
    });
    expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
    const read = await api.get(`/v1/variables/${res.body.data.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ data: res.body.data });
  });

  it('stores a text value exactly as sent (no trimming, no JSON parsing), with type, description and an enabled locale', async () => {
    const api = await site(['en', 'de']);
    const value = '  {"not": "parsed"}\n\twith spaces  ';
    const res = await api.post('/v1/variables', {
      type: 'text',
      key: 'Footer_Note-2',
      label: 'Fußnote',
      value,
      description: 'Shown in the footer',
      locale: 'DE',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ key: 'Footer_Note-2', label: 'Fußnote', value, type: 'text', description: 'Shown in the footer', locale: 'de' });
  });

  it('ignores unknown body fields', async () => {
    const api = await site();
    const res = await api.post('/v1/variables', { key: 'k', label: 'L', value: 'v', slug: 'nope', contentCount: 3 });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data).sort()).toEqual([
      'createdAt',
      'description',
      'id',
      'key',
      'label',
      'locale',
      'translationGroup',
      'type',
      'updatedAt',
      'value',
    ]);
  });

  it('holds key to 1-100 characters: 100 passes, 101 fails with 422 on key', async () => {
    const api = await site();
    const key100 = `k${'a'.repeat(99)}`;
    const ok = await api.post('/v1/variables', { key: key100, label: 'L', value: 'v' });
    expect(ok.status).toBe(201);
    expect(ok.body.data.key).toBe(key100);
    expect422(await api.post('/v1/variables', { key: `k${'a'.repeat(100)}`, label: 'L', value: 'v' }), 'VALIDATION_FAILED', ['key']);
    expect422(await api.post('/v1/variables', { key: '', label: 'L', value: 'v' }), 'VALIDATION_FAILED', ['key']);
    expect422(await api.post('/v1/variables', { label: 'L', value: 'v' }), 'VALIDATION_FAILED', ['key']);
  });

  it('holds key to the pattern: a letter, then letters, digits, _, . or -', async () => {
    const api = await site();
    for (const key of ['a', 'Z', 'a.b-c_d9', 'Site.Footer.Copyright-2025_v2']) {
      const res = await api.post('/v1/variables', { key, label: 'L', value: 'v' });
      expect(res.status, key).toBe(201);
    }
    for (const key of ['1abc', '_abc', '.abc', '-abc', 'has space', 'a$b', 'a/b', 'ä', 'a:b', ' a']) {
      expect422(await api.post('/v1/variables', { key, label: 'L', value: 'v' }), 'VALIDATION_FAILED', ['key'], key);
    }
    expect422(await api.post('/v1/variables', { key: 12, label: 'L', value: 'v' }), 'VALIDATION_FAILED', ['key']);
  });

  it('holds label to 1-255 characters: 255 passes, 256 fails', async () => {
    const api = await site();
    const ok = await api.post('/v1/variables', { key: 'a', label: 'l'.repeat(255), value: 'v' });
    expect(ok.status).toBe(201);
    expect(ok.body.data.label).toBe('l'.repeat(255));
    expect422(await api.post('/v1/variables', { key: 'b', label: 'l'.repeat(256), value: 'v' }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.post('/v1/variables', { key: 'b', label: '', value: 'v' }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.post('/v1/variables', { key: 'b', value: 'v' }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.post('/v1/variables', { key: 'b', label: null, value: 'v' }), 'VALIDATION_FAILED', ['label']);
  });

  it('holds value to 1-100000 characters: 100000 passes, 100001 fails with 422 on value', async () => {
    const api = await site();
    const ok = await api.post('/v1/variables', { key: 'big', label: 'Big', value: 'v'.repeat(100_000) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.value).toBe('v'.repeat(100_000));
    expect((await api.get(`/v1/variables/${ok.body.data.id}`)).body.data.value.length).toBe(100_000);
    const over = await api.post('/v1/variables', { key: 'bigger', label: 'Bigger', value: 'v'.repeat(100_001) });
    expect422(over, 'VALIDATION_FAILED', ['value']);
    expect(over.body.errors.value).toEqual(['must be at most 100000 characters']);
    expect422(await api.post('/v1/variables', { key: 'e', label: 'E', value: '' }), 'VALIDATION_FAILED', ['value']);
    expect422(await api.post('/v1/variables', { key: 'e', label: 'E' }), 'VALIDATION_FAILED', ['value']);
    expect422(await api.post('/v1/variables', { key: 'e', label: 'E', value: 42 }), 'VALIDATION_FAILED', ['value']);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(1);
  });

  it('counts value characters, not bytes: 100000 multi-byte characters pass', async () => {
    const api = await site();
    const res = await api.post('/v1/variables', { key: 'umlauts', label: 'U', value: 'ü'.repeat(100_000) });
    expect(res.status).toBe(201);
    expect(res.body.data.value).toBe('ü'.repeat(100_000));
  });

  it('holds description to at most 500 characters and accepts null', async () => {
    const api = await site();
    const ok = await api.post('/v1/variables', { key: 'a', label: 'A', value: 'v', description: 'd'.repeat(500) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.description).toBe('d'.repeat(500));
    const nul = await api.post('/v1/variables', { key: 'b', label: 'B', value: 'v', description: null });
    expect(nul.status).toBe(201);
    expect(nul.body.data.description).toBeNull();
    const empty = await api.post('/v1/variables', { key: 'c', label: 'C', value: 'v', description: '' });
    expect(empty.status).toBe(201);
    expect(empty.body.data.description).toBe('');
    expect422(await api.post('/v1/variables', { key: 'd', label: 'D', value: 'v', description: 'd'.repeat(501) }), 'VALIDATION_FAILED', ['description']);
  });

  it('refuses a type other than text or calendar with 422 on type', async () => {
    const api = await site();
    for (const type of ['number', 'TEXT', '', null, 1]) {
      expect422(await api.post('/v1/variables', { key: 'a', label: 'A', value: 'v', type }), 'VALIDATION_FAILED', ['type'], String(type));
    }
  });

  it('refuses a key already used in the same site and locale (422 KEY_TAKEN on key), but allows it in another locale or site', async () => {
    const api = await site(['en', 'de']);
    expect((await api.post('/v1/variables', { key: 'brand.name', label: 'Brand', value: 'Cairn' })).status).toBe(201);
    const dup = await api.post('/v1/variables', { key: 'brand.name', label: 'Other', value: 'Other' });
    expect422(dup, 'KEY_TAKEN', ['key']);
    expect(dup.body.message).toBe('The key "brand.name" is already used in en.');
    const dupCalendar = await api.post('/v1/variables', { key: 'brand.name', label: 'Other', value: '[]', type: 'calendar' });
    expect422(dupCalendar, 'KEY_TAKEN', ['key']);
    const de = await api.post('/v1/variables', { key: 'brand.name', label: 'Marke', value: 'Cairn', locale: 'de' });
    expect(de.status).toBe(201);
    expect(de.body.data.locale).toBe('de');
    const other = await site();
    expect((await other.post('/v1/variables', { key: 'brand.name', label: 'Brand', value: 'Else' })).status).toBe(201);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(2);
  });

  it('treats keys as case-sensitive', async () => {
    const api = await site();
    expect((await api.post('/v1/variables', { key: 'Brand', label: 'A', value: 'a' })).status).toBe(201);
    expect((await api.post('/v1/variables', { key: 'brand', label: 'B', value: 'b' })).status).toBe(201);
    expect((await api.get('/v1/variables?key=brand')).body.data.map((v: any) => v.value)).toEqual(['b']);
  });

  it('backs the key rule with a unique index on (site_id, locale, key)', async () => {
    const { api, siteId } = await siteWithId();
    const first = (await api.post('/v1/variables', { key: 'idx', label: 'A', value: 'a' })).body.data;
    const at = new Date().toISOString();
    const row = {
      site_id: siteId,
      key: 'idx',
      label: 'B',
      value: 'b',
      type: 'text' as const,
      description: null,
      locale: 'en',
      translation_group: first.translationGroup,
      created_at: at,
      updated_at: at,
    };
    await expect(ctx.app.database.db.insertInto('variables').values(row).execute()).rejects.toThrow();
    await ctx.app.database.db
      .insertInto('variables')
      .values({ ...row, locale: 'fr' })
      .execute();
  });

  it('refuses a locale that is not enabled, or not a language tag, with 422 on locale', async () => {
    const api = await site();
    const off = await api.post('/v1/variables', { key: 'a', label: 'A', value: 'v', locale: 'de' });
    expect422(off, 'LOCALE_NOT_ENABLED', ['locale']);
    const bad = await api.post('/v1/variables', { key: 'a', label: 'A', value: 'v', locale: 'xx_!!' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('locale');
    expect((await api.get('/v1/variables')).body.meta.total).toBe(0);
  });

  it('joins a translation group, and answers 409 TRANSLATION_EXISTS when the group already has that locale', async () => {
    const api = await site(['en', 'de']);
    const en = (await api.post('/v1/variables', { key: 'greeting', label: 'Greeting', value: 'Hello' })).body.data;
    const de = await api.post('/v1/variables', { key: 'greeting', label: 'Gruß', value: 'Hallo', locale: 'de', translationGroup: en.translationGroup });
    expect(de.status).toBe(201);
    expect(de.body.data.translationGroup).toBe(en.translationGroup);
    const again = await api.post('/v1/variables', { key: 'greeting2', label: 'Gruß', value: 'Hallo', locale: 'de', translationGroup: en.translationGroup });
    expect(again.status).toBe(409);
    expectErrorShape(again.body, 409, 'TRANSLATION_EXISTS');
    expect422(await api.post('/v1/variables', { key: 'x', label: 'X', value: 'x', translationGroup: 'not-a-uuid' }), 'VALIDATION_FAILED', ['translationGroup']);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(2);
  });
});

describe('calendar variables', () => {
  const post = (api: Client, value: unknown, key = 'holidays') =>
    api.post('/v1/variables', { key, label: 'Holidays', type: 'calendar', value: typeof value === 'string' ? value : JSON.stringify(value) });

  it('accepts a valid calendar and stores it normalized (compact JSON, keys in the order date, endDate, label, color)', async () => {
    const api = await site();
    const value = `[
      { "label": "New Year", "date": "2026-01-01", "color": "#f00" },
      { "color": "#00AA11", "label": "Summer break", "endDate": "2026-08-15", "date": "2026-07-20" },
      { "date": "2024-02-29", "label": "Leap day", "endDate": "2024-02-29" },
      { "date": "2026-12-24", "label": "Ünïcödé 🎄" }
    ]`;
    const res = await post(api, value);
    expect(res.status).toBe(201);
    const normalized =
      '[{"date":"2026-01-01","label":"New Year","color":"#f00"},' +
      '{"date":"2026-07-20","endDate":"2026-08-15","label":"Summer break","color":"#00AA11"},' +
      '{"date":"2024-02-29","endDate":"2024-02-29","label":"Leap day"},' +
      '{"date":"2026-12-24","label":"Ünïcödé 🎄"}]';
    expect(res.body.data).toMatchObject({ key: 'holidays', type: 'calendar', value: normalized });
    expect((await api.get(`/v1/variables/${res.body.data.id}`)).body.data.value).toBe(normalized);
  });

  it('accepts an empty calendar and exactly 1000 entries, refuses 1001 on value', async () => {
    const api = await site();
    const empty = await post(api, ' [ ] ', 'empty');
    expect(empty.status).toBe(201);
    expect(empty.body.data.value).toBe('[]');
    const entries = Array.from({ length: 1000 }, (_, i) => ({ date: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`, label: `E${i}` }));
    const ok = await post(api, entries, 'thousand');
    expect(ok.status).toBe(201);
    expect(JSON.parse(ok.body.data.value)).toHaveLength(1000);
    const over = await post(api, [...entries, { date: '2026-02-01', label: 'one more' }], 'toomany');
    expect422(over, 'CALENDAR_INVALID', ['value']);
    expect(over.body.errors.value).toEqual(['must have at most 1000 entries']);
  });

  it('accepts a label of 255 characters and a 3- or 6-digit hex color in either case', async () => {
    const api = await site();
    const res = await post(api, [
      { date: '2026-03-01', label: 'l'.repeat(255), color: '#ABC' },
      { date: '2026-03-02', label: '🎉'.repeat(255), color: '#a1b2c3' },
    ]);
    expect(res.status).toBe(201);
  });

  it('refuses a value that is not JSON, or not a list, with 422 CALENDAR_INVALID on value', async () => {
    const api = await site();
    for (const value of [
      'not json',
      '[{"date": "2026-01-01", "label": "x"},]',
      '{"date":"2026-01-01","label":"x"}',
      '"2026-01-01"',
      '42',
      'null',
      '{"entries":[]}',
    ]) {
      const res = await post(api, value);
      expect422(res, 'CALENDAR_INVALID', ['value'], value);
    }
    const res = await post(api, 'not json');
    expect(res.body.errors.value).toEqual(['must be valid JSON: a list of calendar entries']);
    expect(res.body.message).toBe('value: must be valid JSON: a list of calendar entries');
    expect((await api.get('/v1/variables')).body.meta.total).toBe(0);
  });

  it('names the path of each invalid entry', async () => {
    const api = await site();
    const good = { date: '2026-05-01', label: 'ok' };
    const cases: Array<[unknown, string, string]> = [
      ['2026-01-01', 'value[1]', 'must be an object { date, endDate?, label, color? }'],
      [null, 'value[1]', 'must be an object { date, endDate?, label, color? }'],
      [[good], 'value[1]', 'must be an object { date, endDate?, label, color? }'],
      [{ label: 'no date' }, 'value[1].date', 'is required'],
      [{ date: '2026-1-01', label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-02-30', label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2025-02-29', label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-13-01', label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-01-01T00:00:00Z', label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: 20260101, label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: null, label: 'x' }, 'value[1].date', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-01-02', endDate: '2026-01-01', label: 'x' }, 'value[1].endDate', 'must not be before date'],
      [{ date: '2026-01-02', endDate: '2026-04-31', label: 'x' }, 'value[1].endDate', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-01-02', endDate: null, label: 'x' }, 'value[1].endDate', 'must be a real date as YYYY-MM-DD'],
      [{ date: '2026-01-01' }, 'value[1].label', 'is required'],
      [{ date: '2026-01-01', label: '' }, 'value[1].label', 'must be a string of 1-255 characters'],
      [{ date: '2026-01-01', label: 'l'.repeat(256) }, 'value[1].label', 'must be a string of 1-255 characters'],
      [{ date: '2026-01-01', label: 7 }, 'value[1].label', 'must be a string of 1-255 characters'],
      [{ date: '2026-01-01', label: 'x', color: 'red' }, 'value[1].color', 'must be a hex color #rgb or #rrggbb'],
      [{ date: '2026-01-01', label: 'x', color: '#abcd' }, 'value[1].color', 'must be a hex color #rgb or #rrggbb'],
      [{ date: '2026-01-01', label: 'x', color: 'ff0000' }, 'value[1].color', 'must be a hex color #rgb or #rrggbb'],
      [{ date: '2026-01-01', label: 'x', color: '#ggg' }, 'value[1].color', 'must be a hex color #rgb or #rrggbb'],
      [{ date: '2026-01-01', label: 'x', color: null }, 'value[1].color', 'must be a hex color #rgb or #rrggbb'],
      [{ date: '2026-01-01', label: 'x', title: 'extra' }, 'value[1].title', 'is not allowed'],
    ];
    for (const [entry, path, message] of cases) {
      const res = await post(api, [good, entry, good]);
      const label = JSON.stringify(entry).slice(0, 80);
      expect422(res, 'CALENDAR_INVALID', [path], label);
      expect(res.body.errors[path], label).toEqual([message]);
      expect(res.body.message, label).toBe(`${path}: ${message}`);
    }
    expect((await api.get('/v1/variables')).body.meta.total).toBe(0);
  });

  it('reports every issue of a value at once', async () => {
    const api = await site();
    const res = await post(api, [
      { date: '2026-01-01', label: 'ok' },
      { date: 'soon', color: 'blue', extra: 1 },
      { date: '2026-01-05', endDate: '2026-01-04', label: 'x' },
    ]);
    expect422(res, 'CALENDAR_INVALID', ['value[1].extra', 'value[1].date', 'value[1].label', 'value[1].color', 'value[2].endDate']);
  });

  it("does not check a text variable's value as a calendar", async () => {
    const api = await site();
    const res = await api.post('/v1/variables', { key: 'plain', label: 'Plain', value: '[{"date":"nope"}]' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ type: 'text', value: '[{"date":"nope"}]' });
  });

  it('checks the resulting type and value on update', async () => {
    const api = await site();
    const cal = (await post(api, [{ date: '2026-01-01', label: 'A' }])).body.data;
    // A new value for a calendar is checked and normalized.
    expect422(await api.put(`/v1/variables/${cal.id}`, { value: '[{"date":"2026-02-31","label":"B"}]' }), 'CALENDAR_INVALID', ['value[0].date']);
    expect422(await api.put(`/v1/variables/${cal.id}`, { value: 'plain text' }), 'CALENDAR_INVALID', ['value']);
    const upd = await api.put(`/v1/variables/${cal.id}`, { value: '[ {"label":"B", "date":"2026-02-28"} ]' });
    expect(upd.status).toBe(200);
    expect(upd.body.data.value).toBe('[{"date":"2026-02-28","label":"B"}]');
    // A label-only change leaves the value alone.
    expect((await api.put(`/v1/variables/${cal.id}`, { label: 'Renamed' })).body.data.value).toBe('[{"date":"2026-02-28","label":"B"}]');
    // Turning a text variable into a calendar checks its stored value ...
    const text = (await api.post('/v1/variables', { key: 'text', label: 'T', value: 'just words' })).body.data;
    expect422(await api.put(`/v1/variables/${text.id}`, { type: 'calendar' }), 'CALENDAR_INVALID', ['value']);
    expect((await api.get(`/v1/variables/${text.id}`)).body.data).toMatchObject({ type: 'text', value: 'just words' });
    // ... or the value sent with it.
    expect422(await api.put(`/v1/variables/${text.id}`, { type: 'calendar', value: '[{"date":"2026-01-01"}]' }), 'CALENDAR_INVALID', ['value[0].label']);
    const turned = await api.put(`/v1/variables/${text.id}`, { type: 'calendar', value: '[{"date":"2026-01-01","label":"X","endDate":"2026-01-03"}]' });
    expect(turned.status).toBe(200);
    expect(turned.body.data).toMatchObject({ type: 'calendar', value: '[{"date":"2026-01-01","endDate":"2026-01-03","label":"X"}]' });
    // A text variable holding valid calendar JSON can become a calendar without a new value, and is normalized.
    const json = (await api.post('/v1/variables', { key: 'json', label: 'J', value: '[ { "label": "Y", "date": "2026-06-01" } ]' })).body.data;
    const same = await api.put(`/v1/variables/${json.id}`, { type: 'calendar' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ type: 'calendar', value: '[{"date":"2026-06-01","label":"Y"}]' });
    // A calendar can become text; its value is kept, and any value is then accepted.
    const back = await api.put(`/v1/variables/${cal.id}`, { type: 'text' });
    expect(back.body.data).toMatchObject({ type: 'text', value: '[{"date":"2026-02-28","label":"B"}]' });
    expect((await api.put(`/v1/variables/${cal.id}`, { value: 'anything' })).body.data).toMatchObject({ type: 'text', value: 'anything' });
  });
});

describe('GET /v1/variables', () => {
  async function seeded() {
    const api = await site(['en', 'de']);
    const ids: Record<string, number> = {};
    for (const key of ['alpha', 'bravo', 'charlie', 'delta', 'echo']) {
      ids[key] = (
        await api.post('/v1/variables', {
          key,
          label: `Label ${key}`,
          value: `Value of ${key}`,
          description: key === 'delta' ? 'Special DESCRIPTION' : null,
        })
      ).body.data.id;
      await sleep(3);
    }
    ids.calendar = (
      await api.post('/v1/variables', { key: 'foxtrot', label: 'Label foxtrot', type: 'calendar', value: '[{"date":"2026-01-01","label":"Needle"}]' })
    ).body.data.id;
    await sleep(3);
    ids.german = (await api.post('/v1/variables', { key: 'alpha', label: 'Bezeichnung', value: 'Wert', locale: 'de' })).body.data.id;
    return { api, ids };
  }
  const keysOf = (res: { body: any }) => res.body.data.map((v: any) => `${v.key}${v.locale === 'de' ? '@de' : ''}`);

  it('paginates with meta, newest first by default', async () => {
    const { api } = await seeded();
    const res = await api.get('/v1/variables?limit=2&page=2');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 7, perPage: 2, currentPage: 2, lastPage: 4 });
    expect(keysOf(res)).toEqual(['echo', 'delta']);
    expect(keysOf(await api.get('/v1/variables?limit=3'))).toEqual(['alpha@de', 'foxtrot', 'echo']);
    const beyond = await api.get('/v1/variables?limit=2&page=9');
    expect(beyond.body).toEqual({ data: [], meta: { total: 7, perPage: 2, currentPage: 9, lastPage: 4 } });
    const all = await api.get('/v1/variables');
    expect(all.body.meta).toEqual({ total: 7, perPage: 15, currentPage: 1, lastPage: 1 });
    expect(all.body.data[1]).toEqual({
      id: expect.any(Number),
      key: 'foxtrot',
      label: 'Label foxtrot',
      value: '[{"date":"2026-01-01","label":"Needle"}]',
      type: 'calendar',
      description: null,
      locale: 'en',
      translationGroup: expect.stringMatching(UUID),
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
  });

  it('answers an empty page on a site without variables', async () => {
    const api = await site();
    expect((await api.get('/v1/variables')).body).toEqual({ data: [], meta: { total: 0, perPage: 15, currentPage: 1, lastPage: 1 } });
  });

  it('holds limit to 1-100 and page to at least 1 with 422 outside', async () => {
    const { api } = await seeded();
    expect((await api.get('/v1/variables?limit=100')).status).toBe(200);
    expect((await api.get('/v1/variables?limit=1')).body.data).toHaveLength(1);
    for (const q of ['limit=101', 'limit=0', 'page=0', 'limit=abc']) {
      const res = await api.get(`/v1/variables?${q}`);
      expect(res.status, q).toBe(422);
      expectErrorShape(res.body, 422);
    }
  });

  it('sorts by key, label, created_at and updated_at, and refuses other fields with 422 on sortBy', async () => {
    const { api, ids } = await seeded();
    expect(keysOf(await api.get('/v1/variables?sortBy=key&sortOrder=asc&locale=en'))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']);
    expect(keysOf(await api.get('/v1/variables?sortBy=key&sortOrder=desc&locale=en'))).toEqual(['foxtrot', 'echo', 'delta', 'charlie', 'bravo', 'alpha']);
    expect(keysOf(await api.get('/v1/variables?sortBy=label&locale=en'))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot']);
    expect(keysOf(await api.get('/v1/variables?sortBy=label&sortOrder=desc'))).toEqual(['foxtrot', 'echo', 'delta', 'charlie', 'bravo', 'alpha', 'alpha@de']);
    expect(keysOf(await api.get('/v1/variables?sortBy=created_at'))).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'alpha@de']);
    await sleep(5);
    expect((await api.put(`/v1/variables/${ids.bravo}`, { value: 'changed' })).status).toBe(200);
    expect(keysOf(await api.get('/v1/variables?sortBy=updated_at&sortOrder=desc&limit=2'))).toEqual(['bravo', 'alpha@de']);
    expect(keysOf(await api.get('/v1/variables?sortBy=updated_at&limit=1'))).toEqual(['alpha']);
    for (const sortBy of ['slug', 'name', 'value', 'password']) {
      const bad = await api.get(`/v1/variables?sortBy=${sortBy}`);
      expect(bad.status, sortBy).toBe(422);
      expect(bad.body.errors).toHaveProperty('sortBy');
    }
    expect((await api.get('/v1/variables?sortOrder=sideways')).status).toBe(422);
  });

  it('searches key, label, value and description, case-insensitively and literally', async () => {
    const { api } = await seeded();
    const q = async (search: string) => keysOf(await api.get(`/v1/variables?search=${encodeURIComponent(search)}&sortBy=key&sortOrder=asc`));
    expect(await q('CHARLIE')).toEqual(['charlie']);
    expect(await q('label b')).toEqual(['bravo']);
    expect(await q('value of e')).toEqual(['echo']);
    expect(await q('special description')).toEqual(['delta']);
    expect(await q('needle')).toEqual(['foxtrot']);
    expect(await q('wert')).toEqual(['alpha@de']);
    expect(await q('%')).toEqual([]);
    expect(await q('_')).toEqual([]);
    expect((await api.get('/v1/variables?search=')).status).toBe(422);
  });

  it('filters by type, key and keys[]', async () => {
    const { api } = await seeded();
    const q = async (query: string) => keysOf(await api.get(`/v1/variables?${query}&sortBy=key&sortOrder=asc`));
    expect(await q('type=calendar')).toEqual(['foxtrot']);
    expect(await q('type=text&locale=en')).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect((await api.get('/v1/variables?type=number')).status).toBe(422);
    expect(await q('key=alpha')).toEqual(['alpha', 'alpha@de']);
    expect(await q('key=alpha&locale=de')).toEqual(['alpha@de']);
    expect(await q('key=alph')).toEqual([]);
    expect(await q('key=ALPHA')).toEqual([]);
    expect(await q('keys[]=bravo&keys[]=echo&keys[]=missing')).toEqual(['bravo', 'echo']);
    expect(await q('keys=delta')).toEqual(['delta']);
    expect(await q('keys[]=bravo&key=echo')).toEqual([]);
    expect(await q('keys[]=foxtrot&type=calendar')).toEqual(['foxtrot']);
  });

  it('filters by ids[], excludeIds[], locale, translationGroup and dates', async () => {
    const { api, ids } = await seeded();
    const q = async (query: string) => keysOf(await api.get(`/v1/variables?${query}&sortBy=key&sortOrder=asc`));
    expect(await q(`ids[]=${ids.alpha}&ids[]=${ids.echo}`)).toEqual(['alpha', 'echo']);
    expect(await q(`ids=${ids.bravo}`)).toEqual(['bravo']);
    expect(await q(`excludeIds[]=${ids.alpha}&excludeIds[]=${ids.bravo}&locale=en`)).toEqual(['charlie', 'delta', 'echo', 'foxtrot']);
    expect(await q('locale=de')).toEqual(['alpha@de']);
    expect(await q('locale=fr')).toEqual([]);
    const charlie = (await api.get(`/v1/variables/${ids.charlie}`)).body.data;
    expect(await q(`translationGroup=${charlie.translationGroup}`)).toEqual(['charlie']);
    expect((await api.get('/v1/variables?translationGroup=nope')).status).toBe(422);
    expect(await q('dateFrom=2000-01-01&dateTo=2000-12-31')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await q(`dateFrom=${today}&dateTo=${today}`)).length).toBe(7);
    expect((await api.get('/v1/variables?dateFrom=yesterday')).status).toBe(422);
  });

  it('ignores the slug filters of other lists (variables have no slug)', async () => {
    const { api } = await seeded();
    const res = await api.get('/v1/variables?slug=alpha&slugs[]=bravo');
    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(7);
  });

  it("never lists another site's variables", async () => {
    const { api, ids } = await seeded();
    const other = await site();
    await other.post('/v1/variables', { key: 'alpha', label: 'Mine', value: 'mine' });
    expect(keysOf(await other.get('/v1/variables'))).toEqual(['alpha']);
    expect((await other.get(`/v1/variables?ids[]=${ids.alpha}`)).body.meta.total).toBe(0);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(7);
  });
});

describe('GET, PUT and DELETE /v1/variables/:id', () => {
  it('reads, updates (partial) and deletes a variable', async () => {
    const api = await site();
    const created = (await api.post('/v1/variables', { key: 'cta', label: 'Old', value: 'Buy now', description: 'keep me' })).body.data;
    await sleep(5);
    const upd = await api.put(`/v1/variables/${created.id}`, { label: 'New' });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toEqual({ ...created, label: 'New', updatedAt: expect.stringMatching(TIMESTAMP) });
    expect(upd.body.data.updatedAt > created.updatedAt).toBe(true);
    const upd2 = await api.put(`/v1/variables/${created.id}`, { value: 'Buy later', description: null });
    expect(upd2.body.data).toMatchObject({ key: 'cta', label: 'New', value: 'Buy later', description: null, type: 'text', createdAt: created.createdAt });
    expect((await api.get(`/v1/variables/${created.id}`)).body.data).toEqual(upd2.body.data);
    const del = await api.delete(`/v1/variables/${created.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'Variable deleted.' });
    expect((await api.get(`/v1/variables/${created.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/variables/${created.id}`)).status).toBe(404);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(0);
  });

  it('accepts the stored key on PUT, and refuses another with 422 KEY_IMMUTABLE on key', async () => {
    const api = await site();
    const v = (await api.post('/v1/variables', { key: 'fixed.key', label: 'L', value: 'v' })).body.data;
    await api.post('/v1/variables', { key: 'other', label: 'O', value: 'o' });
    const same = await api.put(`/v1/variables/${v.id}`, { key: 'fixed.key', label: 'L2' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ key: 'fixed.key', label: 'L2' });
    for (const key of ['changed', 'other', 'Fixed.Key']) {
      const res = await api.put(`/v1/variables/${v.id}`, { key, label: 'L3' });
      expect422(res, 'KEY_IMMUTABLE', ['key'], key);
      expect(res.body.message).toBe('The key of a variable cannot be changed (it is "fixed.key").');
    }
    expect422(await api.put(`/v1/variables/${v.id}`, { key: '1bad' }), 'VALIDATION_FAILED', ['key']);
    expect((await api.get(`/v1/variables/${v.id}`)).body.data).toMatchObject({ key: 'fixed.key', label: 'L2' });
  });

  it('holds the limits on PUT at their boundaries', async () => {
    const api = await site();
    const v = (await api.post('/v1/variables', { key: 'k', label: 'L', value: 'v' })).body.data;
    const url = `/v1/variables/${v.id}`;
    expect((await api.put(url, { label: 'l'.repeat(255), value: 'v'.repeat(100_000), description: 'd'.repeat(500) })).status).toBe(200);
    expect422(await api.put(url, { label: 'l'.repeat(256) }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.put(url, { label: '' }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.put(url, { value: 'v'.repeat(100_001) }), 'VALIDATION_FAILED', ['value']);
    expect422(await api.put(url, { value: '' }), 'VALIDATION_FAILED', ['value']);
    expect422(await api.put(url, { description: 'd'.repeat(501) }), 'VALIDATION_FAILED', ['description']);
    expect422(await api.put(url, { type: 'number' }), 'VALIDATION_FAILED', ['type']);
    expect422(await api.put(url, { label: null }), 'VALIDATION_FAILED', ['label']);
    expect422(await api.put(url, {}), 'VALIDATION_FAILED', ['body']);
    const stored = (await api.get(url)).body.data;
    expect([stored.label.length, stored.value.length, stored.description.length]).toEqual([255, 100_000, 500]);
  });

  it("answers 404 for an unknown id on every route, another site's id included, and 422 for a non-numeric one", async () => {
    const api = await site();
    const other = await site();
    const foreign = (await other.post('/v1/variables', { key: 'theirs', label: 'T', value: 't' })).body.data.id;
    for (const id of [999999, foreign]) {
      for (const res of [
        await api.get(`/v1/variables/${id}`),
        await api.put(`/v1/variables/${id}`, { label: 'x' }),
        await api.delete(`/v1/variables/${id}`),
        await api.get(`/v1/variables/${id}/translations`),
        await api.post(`/v1/variables/${id}/copy-to-locale`, { targetLocale: 'en' }),
      ]) {
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'NOT_FOUND');
        expect(res.body.message).toBe('The variable was not found.');
      }
    }
    expect((await other.get(`/v1/variables/${foreign}`)).status).toBe(200);
    expect((await api.get('/v1/variables/abc')).status).toBe(422);
    expect((await api.get('/v1/variables/0')).status).toBe(422);
  });

  it('needs the variables scopes; copy-to-locale needs variables.create', async () => {
    const { token } = await createSiteWithToken(ctx.app, { scopes: ['variables.view', 'variables.create', 'sites.update'] });
    const api = client(ctx.app, token);
    expect((await api.put('/v1/site/settings/language', { defaultLocale: 'en', multiLanguageEnabled: true, enabledLocales: ['en', 'de'] })).status).toBe(200);
    const v = (await api.post('/v1/variables', { key: 'k', label: 'L', value: 'v' })).body.data;
    expect((await api.post(`/v1/variables/${v.id}/copy-to-locale`, { targetLocale: 'de' })).status).toBe(200);
    const put = await api.put(`/v1/variables/${v.id}`, { label: 'x' });
    expect(put.status).toBe(403);
    expectErrorShape(put.body, 403, 'MISSING_SCOPE');
    expect((await api.delete(`/v1/variables/${v.id}`)).status).toBe(403);
    const viewer = client(ctx.app, (await createSiteWithToken(ctx.app, { scopes: ['variables.view'] })).token);
    expect((await viewer.get('/v1/variables')).status).toBe(200);
    expect((await viewer.post('/v1/variables', { key: 'k', label: 'L', value: 'v' })).status).toBe(403);
  });
});

describeTranslations(ctx, {
  path: '/v1/variables',
  body: (n) => ({ key: `opening${n}`, label: `Opening hours ${n}`, value: 'Mon-Fri 9-17', description: 'Shown in the header' }),
  translated: { field: 'description', empty: null },
});

describe('translations of variables', () => {
  it('reports missing, partial and complete per enabled locale, comparing label, value and description', async () => {
    const api = await site(['en', 'de', 'fr']);
    const en = (await api.post('/v1/variables', { key: 'opening', label: 'Opening hours', value: 'Mon-Fri 9-17', description: 'Shown in the header' })).body
      .data;
    const status0 = await api.get(`/v1/variables/${en.id}/translations`);
    expect(status0.status).toBe(200);
    expect(status0.body).toEqual({ data: { en: { status: 'complete' }, de: { status: 'missing' }, fr: { status: 'missing' } } });
    const de = (
      await api.post('/v1/variables', { key: 'opening', label: 'Öffnungszeiten', value: 'Mo-Fr 9-17', locale: 'de', translationGroup: en.translationGroup })
    ).body.data;
    await api.post('/v1/variables', {
      key: 'opening',
      label: 'Horaires',
      value: 'Lun-Ven 9-17',
      description: 'En-tête',
      locale: 'fr',
      translationGroup: en.translationGroup,
    });
    expect((await api.get(`/v1/variables/${en.id}/translations`)).body).toEqual({
      data: { en: { status: 'complete' }, de: { status: 'partial' }, fr: { status: 'complete' } },
    });
    // Seen from the German member, which has no description, every other member is complete.
    expect((await api.get(`/v1/variables/${de.id}/translations`)).body).toEqual({
      data: { en: { status: 'complete' }, de: { status: 'complete' }, fr: { status: 'complete' } },
    });
    await api.put(`/v1/variables/${de.id}`, { description: 'Kopfzeile' });
    expect((await api.get(`/v1/variables/${en.id}/translations`)).body.data.de).toEqual({ status: 'complete' });
    await api.put(`/v1/variables/${de.id}`, { description: '   ' });
    expect((await api.get(`/v1/variables/${en.id}/translations`)).body.data.de).toEqual({ status: 'partial' });
  });

  it('copies to a locale (200) with the same key, fields and group, accepts locale as a synonym, and answers 409 when taken', async () => {
    const api = await site(['en', 'de', 'fr']);
    const en = (
      await api.post('/v1/variables', {
        key: 'events',
        label: 'Events',
        type: 'calendar',
        value: '[{"label":"Fair","date":"2026-09-01","color":"#0a0"}]',
        description: 'Dates',
      })
    ).body.data;
    const copy = await api.post(`/v1/variables/${en.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(copy.status).toBe(200);
    expect(copy.body.data).toEqual({
      id: expect.any(Number),
      key: 'events',
      label: 'Events',
      value: '[{"date":"2026-09-01","label":"Fair","color":"#0a0"}]',
      type: 'calendar',
      description: 'Dates',
      locale: 'de',
      translationGroup: en.translationGroup,
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
    expect(copy.body.data.id).not.toBe(en.id);
    const fr = await api.post(`/v1/variables/${en.id}/copy-to-locale`, { locale: 'FR' });
    expect(fr.status).toBe(200);
    expect(fr.body.data).toMatchObject({ key: 'events', locale: 'fr', translationGroup: en.translationGroup });
    const again = await api.post(`/v1/variables/${en.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(again.status).toBe(409);
    expectErrorShape(again.body, 409, 'TRANSLATION_EXISTS');
    const fromCopy = await api.post(`/v1/variables/${copy.body.data.id}/copy-to-locale`, { targetLocale: 'en' });
    expect(fromCopy.status).toBe(409);
    const self = await api.post(`/v1/variables/${en.id}/copy-to-locale`, { targetLocale: 'en' });
    expect(self.status).toBe(409);
    expect((await api.get(`/v1/variables?translationGroup=${en.translationGroup}`)).body.meta.total).toBe(3);
    expect((await api.get(`/v1/variables/${en.id}/translations`)).body.data).toEqual({
      en: { status: 'complete' },
      de: { status: 'complete' },
      fr: { status: 'complete' },
    });
  });

  it('refuses a target locale that is not enabled or missing with 422', async () => {
    const api = await site(['en', 'de']);
    const en = (await api.post('/v1/variables', { key: 'k', label: 'L', value: 'v' })).body.data;
    expect422(await api.post(`/v1/variables/${en.id}/copy-to-locale`, { targetLocale: 'it' }), 'LOCALE_NOT_ENABLED', ['targetLocale']);
    expect422(await api.post(`/v1/variables/${en.id}/copy-to-locale`, { locale: 'it' }), 'LOCALE_NOT_ENABLED', ['locale']);
    expect422(await api.post(`/v1/variables/${en.id}/copy-to-locale`, {}), 'VALIDATION_FAILED', ['targetLocale']);
    expect((await api.get('/v1/variables')).body.meta.total).toBe(1);
  });

  it('answers 422 KEY_TAKEN when another variable already holds the key in the target locale', async () => {
    const api = await site(['en', 'de']);
    const en = (await api.post('/v1/variables', { key: 'shared', label: 'EN', value: 'en' })).body.data;
    const de = (await api.post('/v1/variables', { key: 'shared', label: 'DE', value: 'de', locale: 'de' })).body.data;
    expect(de.translationGroup).not.toBe(en.translationGroup);
    const res = await api.post(`/v1/variables/${en.id}/copy-to-locale`, { targetLocale: 'de' });
    expect422(res, 'KEY_TAKEN', ['key']);
    expect(res.body.message).toBe('The key "shared" is already used in de.');
    expect((await api.get('/v1/variables')).body.meta.total).toBe(2);
  });
});
