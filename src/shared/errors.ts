import { STATUS_CODES } from 'node:http';

/**
 * The error catalog (decisions G3): one stable, machine-readable code per condition, with its
 * HTTP status and default message. Every error a client sees comes from here.
 */
export const ERROR_CATALOG = {
  // Whole API
  VALIDATION_FAILED: { status: 422, message: 'The request is invalid.' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  BAD_REQUEST: { status: 400, message: 'The request could not be understood.' },
  UNAUTHORIZED: { status: 401, message: 'A valid API token is required: send "Authorization: Bearer <token>".' },
  TOKEN_EXPIRED: { status: 401, message: 'The API token has expired.' },
  SITE_KEY_INVALID: { status: 401, message: 'A valid site key is required: send "X-Site-Key: pk_..." or ?siteKey=pk_... (GET /site/info shows it).' },
  TOKEN_REVOKED: { status: 401, message: 'The API token has been revoked.' },
  MISSING_SCOPE: { status: 403, message: 'The API token lacks the scope this endpoint requires.' },
  READ_ONLY_TOKEN: { status: 403, message: 'Delivery tokens are read-only.' },
  NOT_FOUND: { status: 404, message: 'The resource was not found.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No endpoint answers this method and path.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'The method is not allowed here.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body has an unsupported content type.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests: retry after the number of seconds in Retry-After.' },
  INTERNAL_ERROR: { status: 500, message: 'An unexpected error occurred.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is unavailable.' },
  STORAGE_FULL: { status: 507, message: 'The server has no space left to store this; nothing of the request was kept.' },
  // Site settings
  LOCALE_INVALID: { status: 422, message: 'The locale is not a valid BCP 47 language tag.' },
  LOCALE_NOT_ENABLED: { status: 422, message: 'The locale is not enabled for this site.' },
  DEFAULT_LOCALE_NOT_ENABLED: { status: 422, message: 'The default locale must be one of the enabled locales.' },
  TIMEZONE_INVALID: { status: 422, message: 'The timezone is not an IANA timezone identifier.' },
  // Shared rules of resources
  SLUG_TAKEN: { status: 422, message: 'The slug is already used in this locale.' },
  NAME_TAKEN: { status: 422, message: 'The name is already used in this locale.' },
  KEY_TAKEN: { status: 422, message: 'The key is already used in this locale.' },
  KEY_IMMUTABLE: { status: 422, message: 'The key cannot be changed after creation.' },
  UNIQUE_VIOLATION: { status: 422, message: 'A record with the same unique value already exists.' },
  REFERENCE_INVALID: { status: 422, message: 'A referenced record does not exist.' },
  SCHEMA_INVALID: { status: 422, message: 'The field schema is invalid.' },
  DATA_INVALID: { status: 422, message: 'The data does not match the field schema.' },
  BODY_INVALID: { status: 422, message: 'The rich-text body is not a valid document.' },
  TRANSLATION_EXISTS: { status: 409, message: 'The translation group already has a member in that locale.' },
  CATEGORY_NOT_FOUND: { status: 422, message: 'The category does not exist on this site.' },
  PARENT_INVALID: { status: 422, message: 'The parent is not a category of this site, or would create a cycle.' },
  CALENDAR_INVALID: { status: 422, message: 'A calendar value must be a JSON list of entries.' },
  // Site bundles (decisions BN1)
  EXPORT_NOT_READY: { status: 409, message: 'The export is not ready yet: GET it again until its status is "ready".' },
  EXPORT_EXPIRED: { status: 410, message: 'The export has expired: start a new one.' },
  // Contents
  SCHEDULED_AT_REQUIRED: { status: 422, message: 'A scheduled content needs a scheduledAt in the future.' },
  SCHEDULED_AT_PAST: { status: 422, message: 'scheduledAt must be in the future.' },
  CUSTOM_DATA_NOT_ALLOWED: { status: 422, message: 'customData needs a category with a structured schema.' },
  TAG_NOT_FOUND: { status: 422, message: 'The tag does not exist on this site.' },
  REVISION_NOT_FOUND: { status: 404, message: 'The revision was not found.' },
  // Webhooks
  WEBHOOK_URL_INVALID: { status: 422, message: 'The webhook URL must be an http(s) URL that resolves to public addresses.' },
  WEBHOOK_INACTIVE: { status: 409, message: 'The webhook is inactive: enable it (PUT isActive: true) first.' },
  // Integrations (decisions A2): the spec names this code in lower case.
  integration_not_connected: { status: 409, message: 'No search console is connected to this site.' },
  integration_failed: { status: 424, message: 'The search console could not be reached, and nothing is synced yet.' },
  SEARCH_CONSOLE_AUTH_FAILED: { status: 422, message: "Google's token endpoint refused the credentials." },
  SEARCH_CONSOLE_PROPERTY_DENIED: { status: 422, message: 'The credentials have no verified access to this search-console property.' },
  // Redirects
  SOURCE_PATH_TAKEN: { status: 422, message: 'A redirect with this source path already exists.' },
  SOURCE_PATH_INVALID: { status: 422, message: 'An exact source path must start with / (a path on the site, without its query string).' },
  PATTERN_INVALID: { status: 422, message: 'The pattern is not a valid RE2 regular expression (no backreferences or lookaround).' },
  TARGET_INVALID: { status: 422, message: 'The target must be an http(s) URL or a path starting with /.' },
  REDIRECT_LOOP: { status: 422, message: 'The redirect would loop back to where it started.' },
  REDIRECT_CHAIN_TOO_LONG: { status: 422, message: 'The redirect would make a chain of more than 5 redirects.' },
  SUBMISSION_BLOCKED: { status: 403, message: 'Submissions from this address are not accepted.' },
  CAPTCHA_FAILED: { status: 422, message: 'The captcha was not solved; try again.' },
  CAPTCHA_UNAVAILABLE: { status: 503, message: 'The captcha could not be verified; try again.' },
  URL_FETCH_FAILED: { status: 422, message: 'The file at the URL cannot be fetched.' },
  IMAGE_INVALID: { status: 422, message: 'The image cannot be read.' },
  IMAGE_TOO_LARGE: { status: 422, message: 'The image has too many pixels to be decoded safely.' },
  FOLDER_NOT_FOUND: { status: 422, message: 'The folder does not exist on this site.' },
  FOLDER_DEPTH_EXCEEDED: { status: 422, message: 'Folders nest at most 3 levels deep.' },
  FORM_CLOSED: { status: 409, message: 'The form is closed and accepts no submissions.' },
  PATH_TAKEN: { status: 422, message: 'Another page block of this locale already has this path.' },
  PATH_INVALID: { status: 422, message: 'A page path starts with / and has no query string, fragment, blank or dot segment.' },
  // Users, roles and tokens (decisions U1-U4)
  SCOPE_ESCALATION: { status: 403, message: 'You cannot grant scopes you do not hold.' },
  USER_NOT_MANAGEABLE: { status: 403, message: "This user's role holds scopes you do not hold: you cannot change, deactivate or delete them." },
  TOKEN_NOT_MANAGEABLE: { status: 403, message: 'This token holds scopes you do not hold: you cannot change, regenerate or delete it.' },
  OWNER_PROTECTED: { status: 409, message: "The site's owner cannot be demoted, deactivated or deleted (cairn users set-owner moves ownership)." },
  TOKEN_NOT_ACTIVE: { status: 409, message: 'The token is revoked: create a new one.' },
  ROLE_PROTECTED: { status: 409, message: 'The owner role cannot be changed or deleted.' },
  ROLE_IN_USE: { status: 409, message: 'Users hold this role: delete it with reassignTo=<roleId>.' },
  EMAIL_TAKEN: { status: 422, message: 'Another user of this site has this e-mail address.' },
  RETENTION_INVALID: { status: 422, message: 'aggregateRetentionDays must be at least rawRetentionDays.' },
  IMPORT_FILE_INVALID: { status: 422, message: 'The import needs a CSV file (multipart field "file") or a JSON body { entries: [...] }.' },
  // Periods of stats (decisions A8)
  DATE_RANGE_INVALID: { status: 422, message: 'Send either period or both startDate and endDate (real dates, start not after end).' },
  DATE_RANGE_TOO_LONG: { status: 422, message: 'The date range may span at most 3,660 days.' },
  // Cookie consent
  COOKIE_CONSENT_DISABLED: { status: 409, message: 'Cookie consent is disabled for this site: no choices are recorded.' },
  // Idempotency keys (decisions HR4)
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'This Idempotency-Key was used with another request (method, path or body) in the last 24 hours.' },
  CONSENT_CATEGORY_UNKNOWN: { status: 422, message: 'The category is not one of the configured cookie categories.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export type FieldErrors = Record<string, string[]>;

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  errors?: FieldErrors;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly errors?: FieldErrors;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, options: { message?: string; errors?: FieldErrors; headers?: Record<string, string> } = {}) {
    super(options.message ?? ERROR_CATALOG[code].message);
    this.name = 'AppError';
    this.code = code;
    this.statusCode = ERROR_CATALOG[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      statusCode: this.statusCode,
      error: STATUS_CODES[this.statusCode] ?? 'Error',
      code: this.code,
      message: this.message,
    };
    // A 422 always carries `errors` (decisions G3).
    if (this.errors || this.statusCode === 422) body.errors = this.errors ?? {};
    return body;
  }
}

/** A 422 naming one field: `invalid('SLUG_TAKEN', 'slug')`. */
export function invalid(code: ErrorCode, field: string, message?: string): AppError {
  const text = message ?? ERROR_CATALOG[code].message;
  return new AppError(code, { message: text, errors: { [field]: [text] } });
}

/** A 422 from a list of `{ path, message }` issues (field schemas, rich text). */
export function issuesError(code: ErrorCode, issues: Array<{ path: string; message: string }>): AppError {
  const errors: FieldErrors = {};
  for (const issue of issues) (errors[issue.path] ??= []).push(issue.message);
  const first = issues[0];
  return new AppError(code, { message: first ? `${first.path}: ${first.message}` : undefined, errors });
}

export function notFound(what = 'resource'): AppError {
  return new AppError('NOT_FOUND', { message: `The ${what} was not found.` });
}

/** No space (ENOSPC) or no quota (EDQUOT) left where files are written: the file was not kept (a 507, not a 500). */
export function isDiskFull(error: { code?: unknown; cause?: unknown }): boolean {
  for (let e: { code?: unknown; cause?: unknown } | undefined = error, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return true;
  }
  return false;
}
