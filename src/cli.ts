import path from 'node:path';
import { Command, Option } from 'commander';
import { loadConfig } from './config.js';
import { connectDatabase, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { createSite, getSite, listAllSites } from './modules/sites/sites.service.js';
import { createToken, expiryOf, listTokens, regenerateTokenById, revokeToken, type TokenKind } from './modules/api-tokens/api-tokens.service.js';
import { createUser, findUser, listUsers, ownerOf, setOwner } from './modules/users/users.service.js';
import { listRoles, roleFor, roleScopes } from './modules/roles/roles.service.js';
import { AppError } from './shared/errors.js';
import { KEY_FILE, loadSecretBox } from './shared/secrets.js';
import { reencryptSecrets } from './shared/encrypted-columns.js';
import { openStorage } from './shared/storage.js';
import { importSummary, progressPrinter } from './modules/bundles/bundle-progress.js';

/**
 * The `cairn` command. It works beside a running server on the same database (SQLite in WAL
 * mode with a busy timeout; PostgreSQL as usual). With --json it prints exactly one JSON object
 * on stdout and nothing else; messages go to stderr.
 */
async function withDatabase<T>(fn: (database: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = connectDatabase({
    databaseUrl: config.databaseUrl,
    sqliteBusyTimeoutMs: config.database.busyTimeoutMs,
    sqliteCheckpointIntervalMs: config.database.checkpointIntervalMs,
    sqliteOptimizeIntervalMs: config.database.optimizeIntervalMs,
  });
  try {
    await migrateToLatest(database);
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** Runs `fn` on the database once the site is known to exist (404: exit code 2). */
function withSite<T>(siteId: string, fn: (db: Database['db']) => Promise<T>): Promise<T> {
  return withDatabase(async (d) => {
    await getSite(d.db, siteId);
    return fn(d.db);
  });
}

function print(json: boolean, object: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${human}\n`);
}

const program = new Command();
program.name('cairn').description('Cairn headless CMS: server and administration').showHelpAfterError();

program
  .command('migrate')
  .description('apply database migrations')
  .option('--json', 'print JSON')
  .action(async (opts) => {
    const applied = await withDatabase((d) => migrateToLatest(d));
    print(!!opts.json, { applied }, applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
  });

program
  .command('serve')
  .description('start the HTTP server (same as npm start)')
  .action(async () => {
    await import('./server.js');
  });

const sites = program.command('sites').description('manage sites');
sites
  .command('create')
  .requiredOption('--name <name>', 'site name')
  .requiredOption('--domain <domain>', 'site domain, e.g. acme.test')
  .option('--locale <locale>', 'default locale', 'en')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const site = await withDatabase((d) => createSite(d.db, { name: opts.name, domain: opts.domain, defaultLocale: opts.locale }));
    print(!!opts.json, { ...site }, `Created site ${site.name} (${site.id}), slug ${site.slug}`);
  });
sites
  .command('list')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const list = await withDatabase((d) => listAllSites(d.db));
    print(!!opts.json, { data: list }, list.map((s) => `${s.id}  ${s.slug}  ${s.domain}  ${s.name}`).join('\n') || 'No sites.');
  });

/** Progress on stderr: a bar on a terminal, plain lines otherwise, nothing with --json. */
const progressFor = (json: boolean) => progressPrinter(json ? 'silent' : process.stderr.isTTY ? 'tty' : 'plain');
const quietLog = { warn: (o: object, msg: string) => process.stderr.write(`cairn: ${msg} ${JSON.stringify(o)}\n`) };

sites
  .command('export')
  .description("write a whole site to one bundle file (docs/site-bundles.md): never tokens, secrets or visitors' addresses")
  .argument('<siteId>')
  .requiredOption('--out <file>', 'the bundle file to write (.tar.gz)')
  .option('--with-submissions', 'include form submissions')
  .option('--json', 'print one JSON object')
  .action(async (siteId: string, opts) => {
    // Loaded here: the other commands start without the media and archive code.
    const { exportSite } = await import('./modules/bundles/bundles.export.js');
    const config = loadConfig();
    const storage = await openStorage(config, quietLog);
    const summary = await withDatabase((d) =>
      exportSite({ db: d.db, storage, mediaPublicUrl: config.mediaPublicUrl }, siteId, path.resolve(opts.out), {
        withSubmissions: !!opts.withSubmissions,
        onProgress: progressFor(!!opts.json),
      }),
    );
    const rows = Object.values(summary.groups).reduce((n, g) => n + g.count, 0);
    print(
      !!opts.json,
      { siteId: summary.siteId, file: summary.file, groups: summary.groups },
      `Exported site ${siteId} to ${summary.file} (${rows} records and files, ${summary.bytes} bytes).`,
    );
  });
sites
  .command('import')
  .description('import a bundle into an existing site (--into) or a new one (--new); --dry-run shows what would change')
  .argument('<file>')
  .option('--into <siteId>', 'the site to import into')
  .option('--new', 'make a new site for the bundle')
  .option('--name <name>', "with --new: the new site's name (default: the bundle's)")
  .option('--domain <domain>', "with --new: the new site's domain (default: the bundle's)")
  .option('--dry-run', 'show per group what would be created, updated and left unchanged; write nothing')
  .option('--json', 'print one JSON object')
  .action(async (file: string, opts) => {
    if (!!opts.into === !!opts.new) throw new Error('give exactly one of --into <siteId> and --new');
    if (opts.into && (opts.name || opts.domain)) throw new Error('--name and --domain go with --new');
    const { importBundle } = await import('./modules/bundles/bundles.import.js');
    const config = loadConfig();
    const storage = await openStorage(config, quietLog);
    const { box } = loadSecretBox(config.secrets, config.dataDir);
    const report = await withDatabase((d) =>
      importBundle({ db: d.db, storage, secrets: box, mediaPublicUrl: config.mediaPublicUrl }, path.resolve(file), {
        into: opts.into,
        name: opts.name,
        domain: opts.domain,
        dryRun: !!opts.dryRun,
        onProgress: progressFor(!!opts.json),
      }),
    );
    print(!!opts.json, { ...report }, importSummary(report));
  });

const tokens = program.command('tokens').description('manage API tokens');
tokens
  .command('create')
  .requiredOption('--site <siteId>', 'site id')
  .option('--scopes <scopes>', '"all" or a comma-separated list of scopes', 'all')
  .addOption(new Option('--kind <kind>', 'token kind').choices(['management', 'delivery']).default('management'))
  .option('--name <name>', 'token name')
  .option('--user <userId>', 'user the token acts as (default: the site owner)')
  .option('--expires-at <iso>', 'expiry (ISO 8601)')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const created = await withSite(opts.site, async (db) => {
      const user = opts.user ? await findUser(db, opts.site, opts.user) : await ownerOf(db, opts.site);
      if (!user) throw new AppError('NOT_FOUND', { message: `User ${opts.user} not found on site ${opts.site}` });
      const expiresAt = opts.expiresAt ? expiryOf({ expiresAt: opts.expiresAt }) : null;
      const token = await createToken(db, {
        siteId: opts.site,
        userId: user.id,
        name: opts.name,
        kind: opts.kind as TokenKind,
        scopes: opts.scopes,
        expiresAt,
      });
      // The operator may give any scope, but a token acts only with those its user's role holds (decisions U3).
      const role = await roleFor(db, opts.site, user.role_id, 'user');
      const held = new Set(roleScopes(role));
      const inert = token.scopes.filter((s) => !held.has(s));
      if (inert.length)
        process.stderr.write(`cairn: warning: the user's role (${role.slug}) lacks ${inert.length} of these scopes; they stay inert: ${inert.join(', ')}\n`);
      return token;
    });
    print(!!opts.json, { ...created }, `Token ${created.id} (${created.kind}, ${created.scopes.length} scopes). Shown once:\n${created.token}`);
  });
tokens
  .command('list')
  .requiredOption('--site <siteId>', 'site id')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const list = await withSite(opts.site, (db) => listTokens(db, opts.site));
    print(!!opts.json, { data: list }, list.map((t) => `${t.id}  ${t.kind}  ${t.revokedAt ? 'revoked' : 'active'}  ${t.name}`).join('\n') || 'No tokens.');
  });
tokens
  .command('revoke')
  .argument('<tokenId>')
  .option('--json', 'print one JSON object')
  .action(async (tokenId: string, opts) => {
    const revoked = await withDatabase((d) => revokeToken(d.db, tokenId));
    if (!revoked) throw new AppError('NOT_FOUND', { message: `No active token ${tokenId}` });
    print(!!opts.json, { id: tokenId, revoked: true }, `Revoked ${tokenId}`);
  });

tokens
  .command('regenerate')
  .description('give a token a new value (same id, scopes and expiry); the old value stops working at once')
  .argument('<tokenId>')
  .option('--json', 'print one JSON object')
  .action(async (tokenId: string, opts) => {
    const token = await withDatabase((d) => regenerateTokenById(d.db, tokenId));
    print(!!opts.json, { ...token }, `Regenerated ${token.id} (${token.name}). Shown once:\n${token.token}`);
  });

const users = program.command('users').description('manage the users of a site');
users
  .command('list')
  .requiredOption('--site <siteId>', 'site id')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const list = await withSite(opts.site, (db) => listUsers(db, opts.site));
    const line = (u: (typeof list)[number]) =>
      `${u.id}  ${u.role?.slug ?? '-'}${u.isOwner ? ' (owner)' : ''}  ${u.isActive ? 'active' : 'inactive'}  ${u.fullName}`;
    print(!!opts.json, { data: list }, list.map(line).join('\n') || 'No users.');
  });
users
  .command('create')
  .requiredOption('--site <siteId>', 'site id')
  .requiredOption('--name <fullName>', 'full name')
  .option('--email <email>', 'e-mail address (unique per site)')
  .option('--role <slug>', 'role slug (owner excepted)', 'author')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const user = await withSite(opts.site, (db) => createUser(db, opts.site, { fullName: opts.name, email: opts.email, roleSlug: opts.role }));
    print(!!opts.json, { ...user }, `Created user ${user.fullName} (${user.id}), role ${user.role.slug}`);
  });
users
  .command('set-owner')
  .description("make a user the site's owner (the previous owner becomes an administrator)")
  .requiredOption('--site <siteId>', 'site id')
  .argument('<userId>')
  .option('--json', 'print one JSON object')
  .action(async (userId: string, opts) => {
    const user = await withSite(opts.site, (db) => setOwner(db, opts.site, userId));
    print(!!opts.json, { ...user }, `${user.fullName} (${user.id}) now owns the site.`);
  });

const roles = program.command('roles').description('the roles of a site');
roles
  .command('list')
  .requiredOption('--site <siteId>', 'site id')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const list = await withSite(opts.site, (db) => listRoles(db, opts.site));
    print(!!opts.json, { data: list }, list.map((r) => `${r.id}  ${r.slug}  ${r.scopes.length} scopes  ${r.userCount} users  ${r.name}`).join('\n'));
  });

const secrets = program.command('secrets').description('secrets stored encrypted (webhook secrets, the captcha secret, search-console credentials)');
secrets
  .command('rotate')
  .description('re-encrypt every stored secret under CAIRN_SECRET_KEY (older keys in CAIRN_SECRET_KEY_PREVIOUS)')
  .option('--json', 'print one JSON object')
  .action(async (opts) => {
    const config = loadConfig();
    const { box, source } = loadSecretBox(config.secrets, config.dataDir);
    const result = await withDatabase((d) => reencryptSecrets(d.db, box));
    const from = source === 'env' ? 'CAIRN_SECRET_KEY' : path.join(config.dataDir, KEY_FILE);
    print(
      !!opts.json,
      { ...result, keyId: box.keyId },
      `Re-encrypted ${result.rotated} of ${result.checked} stored secrets (${Object.entries(result.tables)
        .map(([t, n]) => `${t}: ${n.rotated}/${n.checked}`)
        .join(', ')}) under key ${box.keyId} (${from}).`,
    );
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`cairn: ${message}\n`);
  process.exit(err instanceof AppError && err.statusCode === 404 ? 2 : 1);
});
