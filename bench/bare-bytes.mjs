// The floor of a cached read (issue 37 item 1): bare node:http answering, from memory, the same
// bytes the service answered for the same path, with the same content type. The service's cached
// delivery reads (15-18 KB each) are compared with it beside the fixed 44-byte answer of
// bench/bare-server.mjs: writing the bytes to the socket is most of a cache hit's cost, and this
// row shows what those bytes cost with nothing else in the way.
//
// Each path is fetched once from the service (CAIRN_URL), with the request's own Authorization
// header, on its first request; every later request is answered from memory.
import http from 'node:http';

const cairn = process.env.CAIRN_URL;
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0 || !cairn) {
  process.stderr.write('bare-bytes: PORT and CAIRN_URL must be set\n');
  process.exit(1);
}

/** The service's answer of each path: its headers as sent here, and its bytes. */
const answers = new Map();

async function fetchAnswer(url, authorization) {
  const res = await fetch(`${cairn}${url}`, { headers: authorization ? { authorization } : {} });
  const body = Buffer.from(await res.arrayBuffer());
  const headers = { 'content-type': res.headers.get('content-type') ?? 'application/json; charset=utf-8', 'content-length': String(body.length) };
  const answer = { status: res.status, headers, body };
  if (res.ok) answers.set(url, answer);
  return answer;
}

const server = http.createServer((req, res) => {
  req.resume();
  if (req.url === '/ready') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
    return;
  }
  const known = answers.get(req.url);
  if (known) {
    res.writeHead(200, known.headers);
    res.end(known.body);
    return;
  }
  fetchAnswer(req.url, req.headers.authorization).then(
    (a) => {
      res.writeHead(a.status, a.headers);
      res.end(a.body);
    },
    (err) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err));
    },
  );
});
server.listen(port, process.env.HOST || '127.0.0.1');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
