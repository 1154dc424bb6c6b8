import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, type TestContext } from '../../../test/helpers/app.js';
import { client } from '../../../test/helpers/http.js';

/**
 * E-mail notifications through a real SMTP server on loopback (smtp-server): form submissions
 * and published contents, sent by the worker, never in the request path, retried when the server
 * refuses (decisions F3, F9).
 */
interface Received {
  from: string;
  to: string[];
  raw: string;
}

let smtp: SMTPServer;
let port = 0;
const inbox: Received[] = [];
let refuse = false;
let ctx: TestContext;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (raw += chunk));
      stream.on('end', () => {
        if (refuse) return callback(Object.assign(new Error('mailbox unavailable'), { responseCode: 451 }));
        inbox.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.server.address() as AddressInfo).port;
  ctx = await buildTestApp({ mail: { smtpUrl: `smtp://127.0.0.1:${port}`, from: 'Cairn <cairn@example.test>' } });
});

afterAll(async () => {
  await ctx?.close();
  await new Promise<void>((resolve) => smtp.close(resolve));
});

const CONTACT = [
  { name: 'name', type: 'text', label: 'Your name', required: true },
  { name: 'email', type: 'email', label: 'E-mail', required: true },
  { name: 'interests', type: 'checkbox', label: 'Interests', options: ['tea', 'coffee'] },
];

async function setup(notifications: Record<string, unknown> = {}) {
  const s = await createSiteWithToken(ctx.app);
  const api = client(ctx.app, s.token);
  await api.put('/v1/settings/notifications', { recipientEmails: ['Team@Example.com', 'boss@example.com'], ...notifications });
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  return { api, key, siteId: s.siteId };
}

const emailJobs = (siteId: string) =>
  ctx.app.database.db.selectFrom('jobs').selectAll().where('site_id', '=', siteId).where('type', '=', 'notify.email').execute();

describe('e-mail notifications (decisions F3, F9)', () => {
  it('e-mails an accepted form submission to the recipients from the worker, not in the request', async () => {
    const { api, key, siteId } = await setup();
    const form = (await api.post('/v1/forms', { name: 'Contact', schema: CONTACT, status: 'active' })).body.data;
    const before = inbox.length;
    const res = await api.post(
      `/v1/public/forms/contact/submissions`,
      { name: 'Ada', email: 'ada@example.com', interests: ['tea', 'coffee'] },
      { 'x-site-key': key },
    );
    expect(res.status).toBe(201);
    expect(inbox.length).toBe(before);
    expect(await emailJobs(siteId)).toHaveLength(1);
    await ctx.app.worker.runDueJobs();
    const mail = inbox.at(-1)!;
    expect(inbox.length).toBe(before + 1);
    expect(mail.from).toBe('cairn@example.test');
    expect(mail.to.sort()).toEqual(['boss@example.com', 'team@example.com']);
    expect(mail.raw).toContain('Subject: New submission: Contact');
    expect(mail.raw).toContain('Your name: Ada');
    expect(mail.raw).toContain('E-mail: ada@example.com');
    expect(mail.raw).toContain('Interests: tea, coffee');
    expect(await ctx.app.database.db.selectFrom('jobs').select('id').where('site_id', '=', siteId).where('failed_at', 'is', null).execute()).toEqual([]);
    // Spam sends nothing.
    await api.post(`/v1/public/forms/contact/submissions`, { name: 'Bot', email: 'bot@example.com', _gotcha: 'x' }, { 'x-site-key': key });
    expect(await emailJobs(siteId)).toHaveLength(0);
    expect(form.id).toEqual(expect.any(Number));
  });

  it("uses a form's own recipients and subject, and sends nothing when the form or the site turned it off", async () => {
    const { api, key, siteId } = await setup();
    const f = (
      await api.post('/v1/forms', {
        name: 'Jobs',
        schema: CONTACT,
        status: 'active',
        notifications: { recipientEmails: ['hr@example.com'], subject: 'Application received' },
      })
    ).body.data;
    await api.post('/v1/public/forms/jobs/submissions', { name: 'Grace', email: 'grace@example.com' }, { 'x-site-key': key });
    await ctx.app.worker.runDueJobs();
    expect(inbox.at(-1)!.to).toEqual(['hr@example.com']);
    expect(inbox.at(-1)!.raw).toContain('Subject: Application received');
    const count = inbox.length;
    await api.put(`/v1/forms/${f.id}`, { notifications: { enabled: false } });
    await api.post('/v1/public/forms/jobs/submissions', { name: 'Grace', email: 'grace@example.com' }, { 'x-site-key': key });
    await ctx.app.worker.runDueJobs();
    expect(inbox.length).toBe(count);
    // The site's preference off: no job at all.
    await api.put('/v1/settings/notifications', { formSubmission: false });
    await api.put(`/v1/forms/${f.id}`, { notifications: { enabled: true } });
    await api.post('/v1/public/forms/jobs/submissions', { name: 'Grace', email: 'grace@example.com' }, { 'x-site-key': key });
    expect(await emailJobs(siteId)).toHaveLength(0);
  });

  it('e-mails published contents only when contentPublished is on', async () => {
    const { api, siteId } = await setup();
    await api.post('/v1/contents', { type: 'post', title: 'Quiet post', status: 'published', bodyMarkdown: 'x' });
    expect(await emailJobs(siteId)).toHaveLength(0);
    await api.put('/v1/settings/notifications', { contentPublished: true });
    const draft = (await api.post('/v1/contents', { type: 'post', title: 'Loud post', bodyMarkdown: 'x' })).body.data;
    await api.post('/v1/contents/bulk/publish', { ids: [draft.id] });
    expect(await emailJobs(siteId)).toHaveLength(1);
    await ctx.app.worker.runDueJobs();
    const mail = inbox.at(-1)!;
    expect(mail.raw).toMatch(/Subject: Published on .*: Loud post/);
    expect(mail.raw).toContain('"Loud post" (en) was published at');
  });

  it('retries an e-mail the SMTP server refuses, and sends it once the server takes it', async () => {
    const { api, key, siteId } = await setup();
    await api.post('/v1/forms', { name: 'Retry', schema: CONTACT, status: 'active' });
    await api.post('/v1/public/forms/retry/submissions', { name: 'Ada', email: 'ada@example.com' }, { 'x-site-key': key });
    const count = inbox.length;
    refuse = true;
    try {
      await ctx.app.worker.runDueJobs();
    } finally {
      refuse = false;
    }
    const [job] = await emailJobs(siteId);
    expect(job!.last_error).toContain('mailbox unavailable');
    expect(Number(job!.attempts)).toBe(1);
    expect(Date.parse(job!.run_at)).toBeGreaterThan(Date.now());
    expect(inbox.length).toBe(count);
    await ctx.app.worker.runDueJobs(new Date(Date.now() + 60_000));
    expect(inbox.length).toBe(count + 1);
    expect(await emailJobs(siteId)).toHaveLength(0);
  });
});

describe('without SMTP_URL', () => {
  it('logs the e-mail as skipped and finishes the job', async () => {
    const plain = await buildTestApp();
    try {
      const s = await createSiteWithToken(plain.app);
      const api = client(plain.app, s.token);
      await api.put('/v1/settings/notifications', { recipientEmails: ['team@example.com'] });
      await api.post('/v1/forms', { name: 'Contact', schema: CONTACT, status: 'active' });
      const key = (await api.get('/v1/site/info')).body.data.publicKey;
      await api.post('/v1/public/forms/contact/submissions', { name: 'Ada', email: 'ada@example.com' }, { 'x-site-key': key });
      expect(await plain.app.worker.runDueJobs()).toBe(1);
      expect(await plain.app.database.db.selectFrom('jobs').select('id').where('site_id', '=', s.siteId).execute()).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
