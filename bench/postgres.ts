import pg from 'pg';

/**
 * A database of the bench's own on the PostgreSQL server of `serverUrl` (any database of it):
 * `cairn_bench_<pid>`, created empty, and a function that drops it (after the run's servers stopped).
 */
export async function createBenchDatabase(serverUrl: string): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `cairn_bench_${process.pid}`;
  const admin = (statement: string) => adminStatement(serverUrl, statement);
  await admin(`drop database if exists ${name}`);
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** One statement on its own connection to `serverUrl` (create or drop a database: no transaction). */
export async function adminStatement(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
