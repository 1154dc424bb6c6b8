import { Data, named, ref } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import * as service from './spam.service.js';

const tags = ['Spam settings'];
const SettingsRef = ref(named('SpamSettings', service.SpamSettings));

/** Spam settings per site (decisions F10): blocked words and addresses, the captcha provider. */
export const spamModule: AppModule = {
  name: 'spam',
  routes(app, { db, secrets, config }) {
    app.get(
      '/spam/settings',
      {
        config: { scope: 'spam.settings.view' },
        schema: { tags, operationId: 'getSpamSettings', summary: 'Spam settings (the captcha secret is never shown)', response: { 200: Data(SettingsRef) } },
      },
      async (req) => ({ data: await service.getSettings(db, req.auth.siteId) }),
    );

    app.put(
      '/spam/settings',
      {
        config: { scope: 'spam.settings.update' },
        schema: {
          tags,
          operationId: 'updateSpamSettings',
          summary: 'Update spam settings (partial)',
          description:
            "Blocked words (at most 500; matched in any case inside submitted text: the submission is stored as spam), blocked addresses (at most 500 IPs or CIDR ranges: submissions are refused with 403), and a captcha provider (turnstile, hcaptcha, recaptcha) with its site key, secret (write-only, encrypted at rest) and an optional verification URL. Forms with `captchaEnabled` then need the answer in `captchaToken` (or the widget's own field).",
          body: service.SpamSettingsUpdate,
          response: { 200: Data(SettingsRef) },
        },
      },
      async (req) => ({ data: await service.updateSettings(db, secrets, config.allowPrivateNetwork, req.auth.siteId, req.body) }),
    );
  },
};
