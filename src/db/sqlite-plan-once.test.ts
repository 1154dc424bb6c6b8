import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { planOnceSql } from './sqlite.js';

describe('the SQL SQLite prepares: equality parameters planned once (decisions PF12)', () => {
  it('marks the parameters of =, is, in lists, LIKE, LIMIT and OFFSET, and leaves ranges, inserted values and quoted text as they are', () => {
    expect(planOnceSql('select * from "contents" where "contents"."site_id" = ? and "contents"."id" = ?')).toBe(
      'select * from "contents" where "contents"."site_id" = +? and "contents"."id" = +?',
    );
    expect(
      planOnceSql(`select * from t where a >= ? and b <= ? and c != ? and d <> ? and e is ? and g in (?, ?) and h IN (?) and i like ? limit ? offset ?`),
    ).toBe(`select * from t where a >= ? and b <= ? and c != ? and d <> ? and e is +? and g in (+?, +?) and h IN (+?) and i like +? limit +? offset +?`);
    expect(planOnceSql(`insert into t (a, b) values (?, ?)`)).toBe(`insert into t (a, b) values (?, ?)`);
    expect(planOnceSql(`select '= ?', 'it''s = ?', "x = ?" from t where "a = ?" = ?`)).toBe(`select '= ?', 'it''s = ?', "x = ?" from t where "a = ?" = +?`);
  });

  it('answers what the plain statement answers for every kind of value, through the same indexes', () => {
    const db = new BetterSqlite3(':memory:');
    db.exec(`create table p (id integer primary key, site text not null, n integer, t text, b blob);
      create index p_site on p (site, n);
      create table q (p_id integer not null references p (id), v text);
      insert into p values (1, 's1', 10, 'ten', x'01'), (2, 's1', null, '20', null), (3, 's2', 30, null, x'02');
      insert into q values (1, 'a'), (2, 'b'), (3, 'c');`);
    const cases: Array<[string, unknown[]]> = [
      ['select p.id, q.v from p join q on q.p_id = p.id where p.site = ? and p.id = ? order by p.id', ['s1', 1]],
      // Text compared with an integer column takes the column's affinity either way.
      ['select p.id, q.v from p join q on q.p_id = p.id where p.id = ? order by p.id', ['2']],
      ['select id from p where n is ? order by id', [null]],
      ['select id from p where t = ? order by id', [20]],
      ['select id from p where b = ? order by id', [Buffer.from([2])]],
      ['select id from p where site = ? and n in (?, ?) order by id', ['s1', 10, 30]],
      ['select id from p order by id limit ? offset ?', [2, 1]],
      // LIKE with the escape every contains-filter writes (db/dialect.ts), case-insensitive either way.
      ["select id from p where t like ? escape '\\' order by id", ['%E%']],
      ["select id from p where t not like ? escape '\\' order by id", ['%e\\%%']],
      ['select id from p order by id limit ?', [-1]],
      ['update p set t = ? where id = ? returning t', ['eleven', 1]],
    ];
    for (const [sql, params] of cases) {
      const rewritten = planOnceSql(sql);
      expect(rewritten).not.toBe(sql);
      db.exec('savepoint s');
      const plain = db.prepare(sql).all(...params);
      db.exec('rollback to s');
      expect(db.prepare(rewritten).all(...params), rewritten).toEqual(plain);
      db.exec('release s');
    }
    const plan = (sql: string) =>
      db
        .prepare(`explain query plan ${sql}`)
        .all('s1', 10)
        .map((r) => (r as { detail: string }).detail);
    const lookup = 'select p.id, q.v from p join q on q.p_id = p.id where p.site = ? and p.n = ?';
    expect(plan(planOnceSql(lookup))).toEqual(plan(lookup));
    const probe = 'select id from p where site = ? and n = ?';
    expect(plan(planOnceSql(probe)).join(' ')).toMatch(/USING (COVERING )?INDEX p_site \(site=\? AND n=\?\)/);
    db.close();
  });
});
