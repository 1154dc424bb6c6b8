import path from 'node:path';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import type { BenchContext, BenchEndpoint, Seeder } from './endpoints.js';

export interface SeedTiming {
  seeder: string;
  ms: number;
  /** What the seeder says it wrote (its returned `summary`), printed with the timing. */
  summary?: string;
}

/**
 * Prepares the database file before the server starts, through the app's own services (from src,
 * so seeding follows the same rules as the API): migrations, one site, one token with every
 * scope (and a neighbour site with its own), then each endpoint's seeder. The connection is closed before the server opens the file.
 */
export async function seedDatabase(
  databaseUrl: string,
  endpoints: readonly BenchEndpoint[],
  /** Seeders not to run here (run otherwise, e.g. through the API). */
  skip: readonly Seeder[] = [],
): Promise<{ ctx: BenchContext; timings: SeedTiming[] }> {
  const database = connectDatabase({ databaseUrl });
  try {
    await migrateToLatest(database);
    const site = await createSite(database.db, { name: 'Bench Site', domain: 'bench.test' });
    const token = await createToken(database.db, { siteId: site.id, userId: site.ownerUserId, name: 'bench', scopes: 'all' });
    // A front end's token: published reads only, answered by the delivery cache when repeated.
    const deliveryToken = await createToken(database.db, { siteId: site.id, userId: site.ownerUserId, name: 'front end', kind: 'delivery', scopes: 'all' });
    // A second tenant, for the noisy-neighbour rows: its reads while the first site floods.
    const neighbour = await createSite(database.db, { name: 'Neighbour Site', domain: 'neighbour.test' });
    const neighbourToken = await createToken(database.db, { siteId: neighbour.id, userId: neighbour.ownerUserId, name: 'neighbour', scopes: 'all' });
    const ctx: BenchContext = {
      siteId: site.id,
      siteSlug: site.slug,
      userId: site.ownerUserId,
      token: token.token,
      publicKey: site.publicKey,
      neighbourToken: neighbourToken.token,
      contentsDeliveryToken: deliveryToken.token,
      // Where seeders may leave files for the reference servers (they run with it as CAIRN_DATA_DIR).
      dataDir: path.dirname(databaseUrl),
    };

    // One run per distinct seeder function, even when several endpoints share it.
    const seen = new Set<Seeder>(skip);
    const timings: SeedTiming[] = [];
    for (const endpoint of endpoints) {
      if (!endpoint.seed || seen.has(endpoint.seed)) continue;
      seen.add(endpoint.seed);
      const started = performance.now();
      const { summary, ...added } = (await endpoint.seed(database.db, ctx.siteId, ctx.userId, ctx)) ?? {};
      timings.push({ seeder: endpoint.seed.name || endpoint.name, ms: performance.now() - started, ...(typeof summary === 'string' ? { summary } : {}) });
      Object.assign(ctx, added);
    }
    return { ctx, timings };
  } finally {
    await database.close();
  }
}
