import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorBody, type FieldErrors, invalid, isDiskFull } from '../shared/errors.js';
import { classifyDbError, type DbFault } from '../db/db-errors.js';
import { FORMAT_MESSAGES } from '../shared/formats.js';
import { isMalformedMultipart, malformedMessage } from '../shared/multipart.js';

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** `/meta/metaTitle` -> `meta.metaTitle`, `/items/0/name` -> `items[0].name`. */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out;
}

function messageOf(error: AjvError): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'maxLength':
      return `must be at most ${error.params.limit} characters`;
    case 'minLength':
      return error.params.limit === 1 ? 'must not be empty' : `must be at least ${error.params.limit} characters`;
    case 'format':
      return FORMAT_MESSAGES[String(error.params.format)] ?? error.message ?? 'is invalid';
    case 'maxItems':
      return `must have at most ${error.params.limit} items`;
    case 'minItems':
      return `must have at least ${error.params.limit} items`;
    default:
      return error.message ?? 'is invalid';
  }
}

/** Ajv errors -> `{ "<field path>": [messages] }`, without the noise of union branches. */
export function validationFieldErrors(errors: AjvError[], context?: string): FieldErrors {
  const byPath = new Map<string, AjvError[]>();
  for (const e of errors) {
    const child =
      e.keyword === 'required' ? String(e.params.missingProperty) : e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : undefined;
    let path = fieldPath(e.instancePath, child);
    if (!path) path = context === 'body' || !context ? 'body' : context;
    (byPath.get(path) ?? byPath.set(path, []).get(path)!).push(e);
  }
  const out: FieldErrors = {};
  for (const [path, list] of byPath) {
    // A nullable field reports its real problem plus "must be null" and "must match a schema in anyOf".
    const useful = list.filter((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null'));
    const chosen = useful.length ? useful : list;
    const consts = chosen.filter((e) => e.keyword === 'const');
    const messages =
      consts.length > 1 && consts.length === chosen.length
        ? [`must be one of: ${consts.map((e) => String(e.params.allowedValue)).join(', ')}`]
        : [...new Set(chosen.map(messageOf))];
    out[path] = messages;
  }
  return out;
}

/** A database constraint error as the catalog error a client sees. */
function dbFaultError(fault: DbFault): AppError {
  switch (fault.kind) {
    case 'reference':
      return new AppError('REFERENCE_INVALID', { errors: { body: ['A referenced record does not exist.'] } });
    case 'nul-character':
      return new AppError('VALIDATION_FAILED', {
        message: 'Text must not contain NUL characters.',
        errors: { body: ['must not contain NUL (\\u0000) characters'] },
      });
    case 'unavailable':
      return new AppError('SERVICE_UNAVAILABLE', {
        message:
          fault.reason === 'busy'
            ? 'The database is busy with another writer; retry after the number of seconds in Retry-After.'
            : 'The database connection was lost; retry after the number of seconds in Retry-After.',
      });
    case 'full':
      return new AppError('STORAGE_FULL', { message: 'The database has no space left to store this write; nothing of it was kept.' });
    case 'unique':
      return invalid(fault.code, fault.field ?? 'body');
  }
}

function body(statusCode: number, code: string, message: string, errors?: FieldErrors): ErrorBody {
  const b: ErrorBody = { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', code, message };
  if (errors || statusCode === 422) b.errors = errors ?? {};
  return b;
}

/** Maps any thrown error to the one error body of decisions G3. Nothing internal leaves the process. */
export function toErrorBody(error: FastifyError & { validation?: AjvError[]; validationContext?: string }): ErrorBody {
  if (error instanceof AppError) return error.toBody();
  if (error.validation) {
    const errors = validationFieldErrors(error.validation, error.validationContext);
    const [firstPath, firstMessages] = Object.entries(errors)[0] ?? ['body', ['is invalid']];
    return body(422, 'VALIDATION_FAILED', `${firstPath} ${firstMessages[0]}`, errors);
  }
  if (isMalformedMultipart(error)) return new AppError('BAD_REQUEST', { message: malformedMessage(error) }).toBody();
  const fault = classifyDbError(error);
  if (fault) return dbFaultError(fault).toBody();
  if (isDiskFull(error)) return new AppError('STORAGE_FULL').toBody();
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE').toBody();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE').toBody();
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return body(422, 'VALIDATION_FAILED', 'The request body is empty.', { body: ['must not be empty'] });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_JSON').toBody();
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return new AppError('INVALID_JSON').toBody();
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE').toBody();
  if (status >= 400 && status < 500) {
    // Framework errors of the client's making: keep the status, never the internals.
    const code = status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'BAD_REQUEST';
    return body(status, code, STATUS_CODES[status] ?? 'Bad request');
  }
  return new AppError('INTERNAL_ERROR').toBody();
}

/**
 * Errors Node's HTTP parser meets before Fastify has a request (headers over the size limit,
 * a request or its headers not received in time, bytes that are not HTTP): answered with the
 * one error body (decisions G3) on the socket, which is then closed (Fastify's own handler wrote
 * a body without `code`).
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('HEADERS_TOO_LARGE')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT')
        : new AppError('BAD_REQUEST');
  const body = JSON.stringify(error.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${error.statusCode} ${STATUS_CODES[error.statusCode]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const out = toErrorBody(error);
    // A body over the limit: read and discard the rest before answering, so a client that sends
    // its whole body before reading gets the 413 instead of a connection reset.
    // (A body a route already read to its end, like a multipart upload past its file limit, has nothing left to drain.)
    if (out.statusCode === 413 && !request.raw.complete && !request.raw.readableEnded) await drain(request.raw);
    if (out.statusCode === 503)
      request.log.warn({ err: { message: error.message, code: (error as { code?: string }).code } }, 'request failed: service unavailable');
    else if (out.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    if (error instanceof AppError && error.headers) reply.headers(error.headers);
    // A 429 or 503 always says when to come back.
    if (out.statusCode === 429 || out.statusCode === 503) {
      const after = Number(reply.getHeader('retry-after'));
      if (!Number.isFinite(after) || after < 1) reply.header('retry-after', 1);
    }
    return reply.code(out.statusCode).type('application/json; charset=utf-8').send(out);
  });
}

/** Past this many discarded bytes the client is cut off; HTTP_REQUEST_TIMEOUT_MS bounds the time. */
const DRAIN_MAX_BYTES = 256 * 1024 * 1024;

function drain(stream: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      stream.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) {
        stream.socket?.destroy();
        done();
      }
    };
    stream.on('data', onData);
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
    stream.resume();
  });
}

/** The answer for a URL no route serves (registered after the rate limiter, which counts it too). */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  const out = new AppError('ROUTE_NOT_FOUND', {
    message: `No endpoint answers ${request.method} ${request.url.split('?')[0]}.`,
  }).toBody();
  return reply.code(404).send(out);
}
