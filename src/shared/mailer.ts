import type { FastifyBaseLogger } from 'fastify';
import { createRequire } from 'node:module';
import type NodeMailer from 'nodemailer';

// Loaded only when SMTP is configured: nodemailer is about 14 MB of a process that sends no mail.
const require = createRequire(import.meta.url);

export interface Email {
  to: readonly string[];
  subject: string;
  text: string;
}

/** Sends e-mail, or says it did not (decisions F3, F9). A failure throws, so the job that sends it is retried. */
export interface Mailer {
  readonly configured: boolean;
  send(email: Email): Promise<void>;
  close(): void;
}

/**
 * SMTP through nodemailer when `SMTP_URL` is set (pooled connections, 10 s timeouts); without it,
 * each e-mail is logged as skipped and counts as done, so a site without mail loses nothing else.
 */
export function createMailer(config: { smtpUrl: string | null; from: string }, log: () => FastifyBaseLogger): Mailer {
  if (!config.smtpUrl) {
    return {
      configured: false,
      async send(email) {
        log().info({ to: email.to.length, subject: email.subject }, 'e-mail skipped: SMTP_URL is not set');
      },
      close() {},
    };
  }
  const nodemailer = require('nodemailer') as typeof NodeMailer;
  const transport = nodemailer.createTransport(config.smtpUrl, {
    pool: true,
    maxConnections: 2,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 10_000,
  } as never);
  return {
    configured: true,
    async send(email) {
      await transport.sendMail({ from: config.from, to: [...email.to], subject: email.subject, text: email.text });
    },
    close() {
      transport.close();
    },
  };
}
