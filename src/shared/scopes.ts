import { AppError } from './errors.js';
/**
 * The full scope catalog of the specification (Authentication, "Permission scopes"), as one constant.
 * Generated from the spec table; `a.view/create` shorthands are expanded.
 */
export const SCOPE_CATALOG = {
  sites: ['sites.view', 'sites.create', 'sites.update', 'sites.delete', 'sites.manage'],
  contents: [
    'contents.view',
    'contents.view.own',
    'contents.create',
    'contents.update',
    'contents.update.own',
    'contents.delete',
    'contents.delete.own',
    'contents.publish',
    'contents.publish.own',
  ],
  media: ['media.view', 'media.upload', 'media.update', 'media.delete'],
  categories: ['categories.view', 'categories.create', 'categories.update', 'categories.delete'],
  tags: ['tags.view', 'tags.create', 'tags.update', 'tags.delete'],
  'single types': ['single_types.view', 'single_types.create', 'single_types.update', 'single_types.delete'],
  'site blocks': ['site_blocks.view', 'site_blocks.create', 'site_blocks.update', 'site_blocks.delete', 'site_blocks.publish', 'site_blocks.schema'],
  webhooks: ['webhooks.view', 'webhooks.create', 'webhooks.update', 'webhooks.delete', 'webhooks.test'],
  'api tokens': ['api_tokens.view', 'api_tokens.create', 'api_tokens.update', 'api_tokens.delete', 'api_tokens.regenerate'],
  forms: ['forms.view', 'forms.create', 'forms.update', 'forms.delete', 'forms.submissions.view', 'forms.submissions.delete', 'forms.submissions.export'],
  reviews: ['reviews.view', 'reviews.create', 'reviews.update', 'reviews.delete', 'reviews.moderate', 'reviews.import', 'reviews.export', 'reviews.settings'],
  spam: ['spam.settings.view', 'spam.settings.update'],
  seo: ['seo.view', 'seo.update'],
  sitemap: ['sitemap.view', 'sitemap.create', 'sitemap.update', 'sitemap.delete', 'sitemap.import', 'sitemap.export'],
  redirects: ['redirects.view', 'redirects.create', 'redirects.update', 'redirects.delete', 'redirects.import', 'redirects.export'],
  'users and roles': [
    'users.view',
    'users.create',
    'users.update',
    'users.delete',
    'users.manage_roles',
    'roles.view',
    'roles.create',
    'roles.update',
    'roles.delete',
    'permissions.view',
    'permissions.assign',
  ],
  analytics: ['analytics.view', 'analytics.export', 'analytics.settings', 'analytics.gsc'],
  variables: ['variables.view', 'variables.create', 'variables.update', 'variables.delete'],
  'cookie consent': ['cookie_consent.view', 'cookie_consent.update', 'cookie_consent.logs', 'cookie_consent.export'],
  AI: ['ai.generate'],
  notifications: ['notifications.settings.view', 'notifications.settings.update'],
  products: [
    'products.view',
    'products.view.own',
    'products.create',
    'products.update',
    'products.update.own',
    'products.delete',
    'products.delete.own',
    'products.publish',
    'products.publish.own',
  ],
  catalog: [
    'collections.view',
    'collections.create',
    'collections.update',
    'collections.delete',
    'product_categories.view',
    'product_categories.create',
    'product_categories.update',
    'product_categories.delete',
    'calendars.view',
    'calendars.create',
    'calendars.update',
    'calendars.delete',
  ],
  orders: ['orders.view', 'orders.create', 'orders.update', 'orders.cancel', 'orders.refund', 'orders.fulfill', 'orders.export', 'orders.manage_returns'],
  returns: ['returns.view', 'returns.view.own', 'returns.create', 'returns.update', 'returns.delete'],
  customers: ['customers.view', 'customers.create', 'customers.update', 'customers.delete', 'customers.groups', 'customers.export'],
  payments: ['payments.view', 'payments.capture', 'payments.refund'],
  inventory: ['inventory.view', 'inventory.update', 'inventory.transfer', 'inventory.export'],
  promotions: ['promotions.view', 'promotions.create', 'promotions.update', 'promotions.delete', 'promotions.analytics'],
  shipping: ['shipping.view', 'shipping.create', 'shipping.update', 'shipping.delete', 'shipping.zones'],
  'regions and taxes': ['regions.view', 'regions.create', 'regions.update', 'regions.delete', 'taxes.view', 'taxes.create', 'taxes.update', 'taxes.delete'],
  pricing: [
    'pricing.view',
    'pricing.create',
    'pricing.update',
    'pricing.delete',
    'price_lists.view',
    'price_lists.create',
    'price_lists.update',
    'price_lists.delete',
    'campaigns.view',
    'campaigns.create',
    'campaigns.update',
    'campaigns.delete',
  ],
  'gift cards': ['gift_cards.view', 'gift_cards.create', 'gift_cards.update', 'gift_cards.delete', 'gift_cards.redeem'],
  carts: ['carts.view', 'carts.create', 'carts.update', 'carts.delete', 'carts.complete'],
  'sales channels': ['sales_channels.view', 'sales_channels.create', 'sales_channels.update', 'sales_channels.delete'],
  commerce: ['commerce_settings.view', 'commerce_settings.update', 'commerce_settings.payments', 'commerce_analytics.view', 'commerce_analytics.export'],
  invoicing: [
    'invoices.view',
    'invoices.create',
    'invoices.download',
    'credit_notes.create',
    'invoicing.settings.view',
    'invoicing.settings.update',
    'vat_rates.view',
    'vat_rates.update',
  ],
} as const;

export type Scope = (typeof SCOPE_CATALOG)[keyof typeof SCOPE_CATALOG][number];
export const ALL_SCOPES: readonly Scope[] = Object.values(SCOPE_CATALOG).flat() as Scope[];
const SCOPE_SET = new Set<string>(ALL_SCOPES);

export function isScope(value: string): value is Scope {
  return SCOPE_SET.has(value);
}

/** A route's scope: one catalog scope, or 'public' for routes that take no token. */
export type RouteScope = Scope | 'public';

export type Access = 'all' | 'own';

/**
 * What a token's scopes grant for a required scope (decisions G12): the plain scope grants every
 * record; its `.own` twin grants only records whose author is the token's user; else nothing.
 */
export function accessFor(granted: ReadonlySet<string>, required: Scope): Access | null {
  if (granted.has(required)) return 'all';
  if (granted.has(`${required}.own`)) return 'own';
  return null;
}

/**
 * What a delivery token may read: the content groups' `.view` scopes (decisions G13). Webhooks,
 * delivery logs, notification recipients, tokens and settings stay with management tokens.
 */
export const DELIVERY_SCOPES: readonly Scope[] = [
  'contents.view',
  'categories.view',
  'tags.view',
  'variables.view',
  'single_types.view',
  'site_blocks.view',
  'forms.view',
  'media.view',
];
const DELIVERY_SET = new Set<string>(DELIVERY_SCOPES);

export function isDeliveryScope(scope: string): boolean {
  return DELIVERY_SET.has(scope);
}

/**
 * No escalation (decisions U4): scopes granted to a token or a role, or reached through a role
 * given to a user, must all be held by the caller. 403 SCOPE_ESCALATION names the others.
 */
export function assertHeld(held: ReadonlySet<string>, granted: Iterable<string>, what: string): void {
  const missing = [...new Set(granted)].filter((s) => !held.has(s));
  if (missing.length) throw new AppError('SCOPE_ESCALATION', { message: `${what} would grant scopes you do not hold: ${missing.join(', ')}.` });
}

const ACTIONS: Record<string, string> = {
  view: 'Read',
  create: 'Create',
  update: 'Change',
  delete: 'Delete',
  publish: 'Publish and unpublish',
  import: 'Import',
  export: 'Export',
  upload: 'Upload',
  manage: 'Manage (exports and site-wide operations of)',
  schema: 'Change the field schemas of',
  test: 'Send test events to',
  regenerate: 'Regenerate the values of',
  manage_roles: 'Give roles to',
  assign: 'Set the scopes of roles, i.e. assign',
  moderate: 'Moderate',
  settings: 'Change the settings of',
  gsc: 'Read search-console data of',
  logs: 'Read the consent records of',
  generate: 'Generate text with',
};

/** A line saying what a scope grants, for GET /permissions: "Delete contents (own records only)". */
export function describeScope(scope: string): string {
  const own = scope.endsWith('.own');
  const parts = (own ? scope.slice(0, -4) : scope).split('.');
  const action = parts.length > 1 ? parts[parts.length - 1]! : '';
  const subject = parts.slice(0, -1).join(' ').replace(/_/g, ' ');
  const verb = ACTIONS[action] ?? action.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return `${verb} ${subject}${own ? " (only records whose author is the token's user)" : ''}`;
}

/** The area of every catalog scope (the catalog's group names). */
export const SCOPE_AREAS: ReadonlyMap<string, string> = new Map(
  Object.entries(SCOPE_CATALOG).flatMap(([area, scopes]) => (scopes as readonly string[]).map((s) => [s, area] as const)),
);
