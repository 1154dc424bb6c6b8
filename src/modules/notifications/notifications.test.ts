import { describe, expect, it } from 'vitest';
import { createSiteWithToken } from '../../../test/helpers/app.js';
import { client, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();

describe('GET and PUT /v1/settings/notifications', () => {
  it('answers the defaults for a new site', async () => {
    const site = await createSiteWithToken(ctx.app);
    const res = await client(ctx.app, site.token).get('/v1/settings/notifications');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { formSubmission: true, newReview: true, reviewApproved: false, contentPublished: false, recipientEmails: [] } });
  });

  it('changes only the given preferences and keeps them per site', async () => {
    const site = await createSiteWithToken(ctx.app);
    const other = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, site.token);
    const res = await api.put('/v1/settings/notifications', { contentPublished: true, recipientEmails: ['Editor@Acme.test', 'ops@acme.test'] });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      formSubmission: true,
      newReview: true,
      reviewApproved: false,
      contentPublished: true,
      recipientEmails: ['editor@acme.test', 'ops@acme.test'],
    });
    const again = await api.put('/v1/settings/notifications', { formSubmission: false });
    expect(again.body.data).toMatchObject({ formSubmission: false, contentPublished: true, recipientEmails: ['editor@acme.test', 'ops@acme.test'] });
    expect((await client(ctx.app, other.token).get('/v1/settings/notifications')).body.data.contentPublished).toBe(false);
  });

  it('refuses invalid e-mails, duplicates, more than 20 recipients, non-booleans and an empty body with 422', async () => {
    const site = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, site.token);
    const emails = Array.from({ length: 20 }, (_, i) => `r${i}@acme.test`);
    expect((await api.put('/v1/settings/notifications', { recipientEmails: emails })).status).toBe(200);
    for (const [body, field] of [
      [{ recipientEmails: ['not-an-email'] }, 'recipientEmails[0]'],
      [{ recipientEmails: ['a@b.test', 'a@b.test'] }, 'recipientEmails'],
      [{ recipientEmails: [...emails, 'x@acme.test'] }, 'recipientEmails'],
      [{ newReview: 'sometimes' }, 'newReview'],
      [{}, 'body'],
    ] as const) {
      const res = await api.put('/v1/settings/notifications', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await api.get('/v1/settings/notifications')).body.data.recipientEmails).toHaveLength(20);
  });

  it('needs notifications.settings.update to change them', async () => {
    const site = await createSiteWithToken(ctx.app, { scopes: ['notifications.settings.view'] });
    const api = client(ctx.app, site.token);
    expect((await api.put('/v1/settings/notifications', { newReview: false })).status).toBe(403);
    expect((await api.get('/v1/settings/notifications')).body.data.newReview).toBe(true);
  });
});
