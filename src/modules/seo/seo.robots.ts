import type { SeoSettings } from './seo.service.js';

/**
 * Known AI crawlers by what they fetch for (decisions S4). Training crawlers collect pages for
 * model training; the others fetch a page because a user asked an assistant or an AI search.
 */
export const AI_TRAINING_CRAWLERS = [
  'GPTBot',
  'Google-Extended',
  'Applebot-Extended',
  'CCBot',
  'ClaudeBot',
  'anthropic-ai',
  'Bytespider',
  'Meta-ExternalAgent',
  'FacebookBot',
  'cohere-training-data-crawler',
  'Diffbot',
  'Omgilibot',
  'AI2Bot',
  'Timpibot',
  'img2dataset',
] as const;
export const AI_ASSISTANT_CRAWLERS = [
  'ChatGPT-User',
  'OAI-SearchBot',
  'Claude-User',
  'Claude-SearchBot',
  'PerplexityBot',
  'Perplexity-User',
  'DuckAssistBot',
  'Meta-ExternalFetcher',
  'MistralAI-User',
] as const;

/**
 * robots.txt (decisions S2): the site's groups in order, each `User-agent` line then its
 * `Allow`/`Disallow` lines (a group without rules disallows nothing), then the AI crawler group
 * the `aiCrawlers` setting asks for, then `Sitemap:` with the sitemap's absolute URL.
 */
export function renderRobots(settings: Pick<SeoSettings, 'robotsRules' | 'robotsSitemapLink' | 'aiCrawlers'>, sitemapUrl: string): string {
  const out: string[] = [];
  for (const group of settings.robotsRules) {
    out.push(`User-agent: ${group.userAgent.trim()}`);
    if (!group.rules.length) out.push('Disallow:');
    for (const rule of group.rules) out.push(`${rule.allow ? 'Allow' : 'Disallow'}: ${rule.path}`);
    out.push('');
  }
  const blocked =
    settings.aiCrawlers === 'block-all'
      ? [...AI_TRAINING_CRAWLERS, ...AI_ASSISTANT_CRAWLERS]
      : settings.aiCrawlers === 'block-training'
        ? AI_TRAINING_CRAWLERS
        : [];
  if (blocked.length) {
    out.push(`# AI crawlers (${settings.aiCrawlers})`);
    for (const agent of blocked) out.push(`User-agent: ${agent}`);
    out.push('Disallow: /', '');
  }
  if (settings.robotsSitemapLink) out.push(`Sitemap: ${sitemapUrl}`, '');
  return out.join('\n');
}
