import type { TestApp } from './app.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** A small client over app.inject, bound to one token. */
export function client(app: TestApp, token?: string) {
  async function call<T = any>(method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await app.inject({
      method,
      url,
      payload: payload as any,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
    let body: any = res.body;
    if ((res.headers['content-type'] ?? '').toString().includes('json') && res.body) body = JSON.parse(res.body);
    return { status: res.statusCode, body, headers: res.headers, text: res.body };
  }
  return {
    get: <T = any>(url: string, headers?: Record<string, string>) => call<T>('GET', url, undefined, headers),
    post: <T = any>(url: string, payload?: unknown, headers?: Record<string, string>) => call<T>('POST', url, payload ?? {}, headers),
    put: <T = any>(url: string, payload?: unknown, headers?: Record<string, string>) => call<T>('PUT', url, payload ?? {}, headers),
    delete: <T = any>(url: string, headers?: Record<string, string>) => call<T>('DELETE', url, undefined, headers),
    call,
  };
}

export type Client = ReturnType<typeof client>;

/** The G3 error body shape. */
export function expectErrorShape(body: any, status: number, code?: string): void {
  const ok = body && body.statusCode === status && typeof body.error === 'string' && typeof body.code === 'string' && typeof body.message === 'string';
  if (!ok) throw new Error(`not a G3 error body for ${status}: ${JSON.stringify(body)}`);
  if (code && body.code !== code) throw new Error(`expected code ${code}, got ${body.code}: ${JSON.stringify(body)}`);
  if (status === 422 && (typeof body.errors !== 'object' || body.errors === null)) throw new Error(`a 422 must carry errors: ${JSON.stringify(body)}`);
  if (JSON.stringify(body).match(/stack|SELECT |INSERT |cairn_[0-9a-f]{32}/i)) throw new Error(`error body leaks internals: ${JSON.stringify(body)}`);
}

/** An ISO 8601 UTC timestamp with milliseconds (decisions G8). */
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A 422 with `code` whose `errors` names exactly `fields`. */
export function expect422(res: { status: number; body: any }, code: string, fields: string[], label = ''): void {
  if (res.status !== 422) throw new Error(`${label} expected 422, got ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  expectErrorShape(res.body, 422, code);
  const got = Object.keys(res.body.errors).sort();
  const want = [...fields].sort();
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new Error(`${label} expected errors on ${want.join(', ')}, got ${got.join(', ')}: ${JSON.stringify(res.body)}`);
}

export type MultipartPart = { name: string; value: string } | { name: string; filename: string; data: Buffer; type?: string };

/** A multipart/form-data body of text and file parts, and its content type. */
export function multipartBody(parts: MultipartPart[]) {
  const boundary = `----cairn${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else {
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: ${p.type ?? 'application/octet-stream'}\r\n\r\n`;
      chunks.push(Buffer.from(head), p.data, Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
