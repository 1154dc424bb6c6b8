import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422, expectErrorShape, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { type SiteClient, useTestApp } from '../../../test/helpers/suite.js';
import { ALL_SCOPES } from '../../shared/scopes.js';

const ctx = useTestApp();

async function rolesOf(api: SiteClient): Promise<Record<string, any>> {
  const list = (await api.get('/v1/roles')).body.data as any[];
  return Object.fromEntries(list.map((r) => [r.slug, r]));
}

async function userRow(id: string) {
  return ctx.app.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

async function userCount(siteId: string): Promise<number> {
  const row = await ctx.app.database.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A user with `role` and a token of theirs holding `scopes` (default: every scope; the role narrows them). */
async function member(api: SiteClient, role: string, scopes: readonly string[] | 'all' = 'all') {
  const roles = await rolesOf(api);
  const user = (await api.post('/v1/users', { fullName: `A ${role}`, roleId: roles[role].id })).body.data;
  const t = await createTokenFor(ctx.app, api.siteId, { userId: user.id, scopes });
  return { user, api: client(ctx.app, t.token), tokenId: t.tokenId };
}

describe('POST /v1/users', () => {
  it('creates a user (201) with the author role by default, a lower-cased e-mail, and no tokens yet', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/users', { fullName: 'Ada Lovelace', email: 'Ada@Example.TEST' });
    expect(res.status).toBe(201);
    const roles = await rolesOf(api);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      fullName: 'Ada Lovelace',
      email: 'ada@example.test',
      roleId: roles.author.id,
      role: { id: roles.author.id, slug: 'author', name: 'Author' },
      isActive: true,
      isOwner: false,
      tokenCount: 0,
      lastActiveAt: null,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
  });

  it('refuses an e-mail another user of the site has, whatever its case (422 EMAIL_TAKEN), but not one of another site', async () => {
    const api = await ctx.site();
    await api.post('/v1/users', { fullName: 'First', email: 'same@example.test' });
    expect422(await api.post('/v1/users', { fullName: 'Second', email: 'SAME@example.test' }), 'EMAIL_TAKEN', ['email']);
    const second = (await api.post('/v1/users', { fullName: 'Second', email: 'other@example.test' })).body.data;
    expect422(await api.put(`/v1/users/${second.id}`, { email: 'Same@Example.test' }), 'EMAIL_TAKEN', ['email']);
    expect((await userRow(second.id))!.email).toBe('other@example.test');
    expect(await userCount(api.siteId)).toBe(3);
    expect((await (await ctx.site()).post('/v1/users', { fullName: 'Elsewhere', email: 'same@example.test' })).status).toBe(201);
    expect422(await api.post('/v1/users', { fullName: 'Bad', email: 'not an e-mail' }), 'VALIDATION_FAILED', ['email']);
  });

  it('needs users.manage_roles for a role other than author (403 MISSING_SCOPE), and scopes of the role the caller holds (403 SCOPE_ESCALATION); nothing written', async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    const noManage = client(
      ctx.app,
      (await createTokenFor(ctx.app, api.siteId, { scopes: ['users.create', 'users.view', 'roles.view', ...roles.author.scopes] })).token,
    );
    const refused = await noManage.post('/v1/users', { fullName: 'Editor', roleId: roles.editor.id });
    expect(refused.status).toBe(403);
    expectErrorShape(refused.body, 403, 'MISSING_SCOPE');
    expect(refused.body.message).toContain('users.manage_roles');
    expect((await noManage.post('/v1/users', { fullName: 'Plain author' })).status).toBe(201);

    const manager = client(
      ctx.app,
      (await createTokenFor(ctx.app, api.siteId, { scopes: ['users.create', 'users.manage_roles', ...roles.viewer.scopes] })).token,
    );
    const escalated = await manager.post('/v1/users', { fullName: 'Admin', roleId: roles.administrator.id });
    expect(escalated.status).toBe(403);
    expectErrorShape(escalated.body, 403, 'SCOPE_ESCALATION');
    expect(escalated.body.message).toContain('contents.create');
    expect((await manager.post('/v1/users', { fullName: 'Viewer', roleId: roles.viewer.id })).status).toBe(201);
    // The owner role is the owner's alone.
    const owner = await api.post('/v1/users', { fullName: 'Second owner', roleId: roles.owner.id });
    expect(owner.status).toBe(409);
    expectErrorShape(owner.body, 409, 'ROLE_PROTECTED');
    expect422(await api.post('/v1/users', { fullName: 'Ghost', roleId: '00000000-0000-4000-8000-000000000000' }), 'REFERENCE_INVALID', ['roleId']);
    expect(await userCount(api.siteId)).toBe(3);
  });
});

describe('GET /v1/users', () => {
  it('lists users with their role, token count and last activity; filters by role, activity and text; paginated', async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    await api.get('/v1/site/info');
    // Users have uuid ids, so only created_at orders them: each a few milliseconds after the last.
    const later = () => new Promise((resolve) => setTimeout(resolve, 5));
    await later();
    const bea = (await api.post('/v1/users', { fullName: 'Bea Viewer', email: 'bea@example.test', roleId: roles.viewer.id })).body.data;
    await later();
    const cy = (await api.post('/v1/users', { fullName: 'Cy Inactive', isActive: false })).body.data;
    await createTokenFor(ctx.app, api.siteId, { userId: bea.id, scopes: ['tags.view'] });
    await createTokenFor(ctx.app, api.siteId, { userId: bea.id, scopes: ['tags.view'] });
    const all = await api.get('/v1/users');
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: 3, perPage: 15, currentPage: 1, lastPage: 1 });
    // Newest first, as every list (decisions G6).
    expect(all.body.data.map((u: any) => [u.fullName, u.role.slug, u.isOwner, u.isActive, u.tokenCount])).toEqual([
      ['Cy Inactive', 'author', false, false, 0],
      ['Bea Viewer', 'viewer', false, true, 2],
      ['Site owner', 'owner', true, true, 1],
    ]);
    expect(all.body.data[2].lastActiveAt).toMatch(ISO_TIMESTAMP);
    expect(all.body.data[1].lastActiveAt).toBeNull();
    expect((await api.get(`/v1/users?roleId=${roles.viewer.id}`)).body.data.map((u: any) => u.id)).toEqual([bea.id]);
    expect((await api.get('/v1/users?isActive=false')).body.data.map((u: any) => u.id)).toEqual([cy.id]);
    expect((await api.get('/v1/users?search=BEA@')).body.data.map((u: any) => u.id)).toEqual([bea.id]);
    const page = await api.get('/v1/users?sortBy=full_name&sortOrder=desc&limit=1&page=2');
    expect(page.body.data.map((u: any) => u.fullName)).toEqual(['Cy Inactive']);
    expect(page.body.meta).toEqual({ total: 3, perPage: 1, currentPage: 2, lastPage: 3 });
  });

  it("never shows another site's users: 404 by id, absent from lists (check 10)", async () => {
    const a = await ctx.site();
    const b = await ctx.site();
    const ofA = (await a.post('/v1/users', { fullName: 'Only on A' })).body.data;
    expect((await b.get('/v1/users')).body.data.map((u: any) => u.fullName)).toEqual(['Site owner']);
    for (const res of [await b.get(`/v1/users/${ofA.id}`), await b.put(`/v1/users/${ofA.id}`, { fullName: 'x' }), await b.delete(`/v1/users/${ofA.id}`)]) {
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'NOT_FOUND');
    }
    expect((await userRow(ofA.id))!.full_name).toBe('Only on A');
  });
});

describe('PUT /v1/users/:id and effective scopes (decisions U3)', () => {
  it('demoting a user to viewer narrows their token at once: POST /contents answers 403 on the next request (check 5)', async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    const editor = await member(api, 'editor');
    expect((await editor.api.post('/v1/contents', { type: 'post', title: 'Before' })).status).toBe(201);
    const res = await api.put(`/v1/users/${editor.user.id}`, { roleId: roles.viewer.id });
    expect(res.status).toBe(200);
    expect(res.body.data.role).toEqual({ id: roles.viewer.id, slug: 'viewer', name: 'Viewer' });
    const after = await editor.api.post('/v1/contents', { type: 'post', title: 'After' });
    expect(after.status).toBe(403);
    expectErrorShape(after.body, 403, 'MISSING_SCOPE');
    expect((await editor.api.get('/v1/contents')).status).toBe(200);
    // The token keeps its stored scopes; what it may do is the intersection.
    const shown = (await api.get(`/v1/api-tokens/${editor.tokenId}`)).body.data;
    expect(shown.scopes).toHaveLength(ALL_SCOPES.length);
    expect([...shown.effectiveScopes].sort()).toEqual([...roles.viewer.scopes].sort());
  });

  it('deactivating a user makes their tokens answer 401 TOKEN_REVOKED at once; reactivating brings them back (check 6)', async () => {
    const api = await ctx.site();
    const editor = await member(api, 'editor');
    expect((await editor.api.get('/v1/tags')).status).toBe(200);
    expect((await api.put(`/v1/users/${editor.user.id}`, { isActive: false })).body.data.isActive).toBe(false);
    const res = await editor.api.get('/v1/tags');
    expect(res.status).toBe(401);
    expectErrorShape(res.body, 401, 'TOKEN_REVOKED');
    await api.put(`/v1/users/${editor.user.id}`, { isActive: true });
    expect((await editor.api.get('/v1/tags')).status).toBe(200);
  });

  it("lets an author's .own token edit their own content (200) but not another author's (404, decisions P5: outside its .own scope a record is not there) (check 7)", async () => {
    const api = await ctx.site();
    const scopes = ['contents.view', 'contents.create', 'contents.update.own'];
    const ann = await member(api, 'author', scopes);
    const bob = await member(api, 'author', scopes);
    const annContent = (await ann.api.post('/v1/contents', { type: 'post', title: 'Ann writes' })).body.data;
    const bobContent = (await bob.api.post('/v1/contents', { type: 'post', title: 'Bob writes' })).body.data;
    expect(annContent.author).toMatchObject({ id: ann.user.id });
    expect((await ann.api.put(`/v1/contents/${annContent.id}`, { title: 'Ann edits' })).status).toBe(200);
    const other = await ann.api.put(`/v1/contents/${bobContent.id}`, { title: 'Ann meddles' });
    expect(other.status).toBe(404);
    expectErrorShape(other.body, 404, 'NOT_FOUND');
    expect((await ann.api.delete(`/v1/contents/${bobContent.id}`)).status).toBe(403);
    expect((await api.get(`/v1/contents/${bobContent.id}`)).body.title).toBe('Bob writes');
  });

  it('protects the owner: no other role, no deactivation, no deletion (409 OWNER_PROTECTED, check 8)', async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    for (const res of [
      await api.put(`/v1/users/${api.userId}`, { roleId: roles.administrator.id }),
      await api.put(`/v1/users/${api.userId}`, { isActive: false }),
      await api.delete(`/v1/users/${api.userId}`),
    ]) {
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'OWNER_PROTECTED');
    }
    const owner = (await api.get(`/v1/users/${api.userId}`)).body.data;
    expect(owner).toMatchObject({ isOwner: true, isActive: true, role: { slug: 'owner' } });
    // A rename is fine.
    expect((await api.put(`/v1/users/${api.userId}`, { fullName: 'Olga Owner' })).body.data.fullName).toBe('Olga Owner');
  });

  it('needs users.manage_roles to set roleId, and refuses a role beyond the caller (403, user unchanged)', async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    const target = (await api.post('/v1/users', { fullName: 'Target' })).body.data;
    const noManage = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: ['users.update'] })).token);
    const refused = await noManage.put(`/v1/users/${target.id}`, { roleId: roles.viewer.id, fullName: 'Renamed' });
    expect(refused.status).toBe(403);
    expectErrorShape(refused.body, 403, 'MISSING_SCOPE');
    const weak = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: ['users.update', 'users.manage_roles', ...roles.editor.scopes] })).token);
    const escalated = await weak.put(`/v1/users/${target.id}`, { roleId: roles.administrator.id });
    expect(escalated.status).toBe(403);
    expectErrorShape(escalated.body, 403, 'SCOPE_ESCALATION');
    const row = await userRow(target.id);
    expect([row!.full_name, row!.role_id]).toEqual(['Target', roles.author.id]);
    expect((await weak.put(`/v1/users/${target.id}`, { roleId: roles.editor.id })).body.data.role.slug).toBe('editor');
  });
});

describe('DELETE /v1/users/:id', () => {
  it('removes the user and their tokens (401 next request) and gives their contents to reassignTo', async () => {
    const api = await ctx.site();
    const leaving = await member(api, 'editor');
    const content = (await leaving.api.post('/v1/contents', { type: 'post', title: 'Left behind' })).body.data;
    const heir = (await api.post('/v1/users', { fullName: 'Heir' })).body.data;
    expect422(await api.delete(`/v1/users/${leaving.user.id}?reassignTo=00000000-0000-4000-8000-000000000000`), 'REFERENCE_INVALID', ['reassignTo']);
    expect((await leaving.api.get('/v1/tags')).status).toBe(200);
    const res = await api.delete(`/v1/users/${leaving.user.id}?reassignTo=${heir.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'User deleted.' });
    expect((await leaving.api.get('/v1/tags')).status).toBe(401);
    expect(await userRow(leaving.user.id)).toBeUndefined();
    expect((await api.get(`/v1/contents/${content.id}`)).body.author).toMatchObject({ id: heir.id });
    expect((await api.get(`/v1/api-tokens?userId=${leaving.user.id}&status[]=revoked&status[]=active`)).body.meta.total).toBe(0);
  });

  it("refuses a caller who lacks some scope of the user's role: no reactivation, edit or deletion of a stronger user (403 USER_NOT_MANAGEABLE, decisions UR10), nothing written", async () => {
    const api = await ctx.site();
    const roles = await rolesOf(api);
    const admin = await member(api, 'administrator');
    expect((await api.put(`/v1/users/${admin.user.id}`, { isActive: false })).status).toBe(200);
    // An administrator's manager holding the users scopes and what a viewer holds, not the administrator's power.
    const manager = await member(api, 'administrator', ['users.view', 'users.update', 'users.delete', ...roles.viewer.scopes]);
    for (const res of [
      await manager.api.put(`/v1/users/${admin.user.id}`, { isActive: true }),
      await manager.api.put(`/v1/users/${admin.user.id}`, { fullName: 'Renamed' }),
      await manager.api.delete(`/v1/users/${admin.user.id}`),
    ]) {
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'USER_NOT_MANAGEABLE');
      expect(res.body.message).toContain('contents.create');
    }
    expect(await userRow(admin.user.id)).toMatchObject({ full_name: 'A administrator' });
    expect(Boolean((await userRow(admin.user.id))!.is_active)).toBe(false);
    expect((await admin.api.get('/v1/tags')).status).toBe(401);
    // A viewer's scopes it holds: that user it may rename, deactivate and delete.
    const viewer = await member(api, 'viewer');
    expect((await manager.api.put(`/v1/users/${viewer.user.id}`, { fullName: 'Vera', isActive: false })).status).toBe(200);
    expect((await manager.api.delete(`/v1/users/${viewer.user.id}`)).status).toBe(200);
    expect(await userRow(viewer.user.id)).toBeUndefined();
  });

  it('leaves contents without an author when no reassignTo is given', async () => {
    const api = await ctx.site();
    const leaving = await member(api, 'editor');
    const content = (await leaving.api.post('/v1/contents', { type: 'post', title: 'Orphan' })).body.data;
    expect((await api.delete(`/v1/users/${leaving.user.id}`)).status).toBe(200);
    expect((await api.get(`/v1/contents/${content.id}`)).body.author).toBeNull();
  });
});
