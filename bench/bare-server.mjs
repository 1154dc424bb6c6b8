// The reference point of `npm run bench`: a bare node:http server answering one fixed, small JSON
// document, run in its own process like the service. The service's req/s divided by this one's
// is the "vs bare node:http" ratio: how much of the machine's raw HTTP capacity an endpoint keeps
// once routing, auth, validation, the database and serialization are added.
import http from 'node:http';

const body = Buffer.from(JSON.stringify({ data: [{ id: 'x', name: 'bench' }] }));
// The same content type Fastify sends, so the responses differ only in what the service adds.
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = http.createServer((req, res) => {
  // Drain any request body so keep-alive connections stay usable for the next request.
  req.resume();
  res.writeHead(200, headers);
  res.end(body);
});

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('bare-server: PORT must be set to a free port\n');
  process.exit(1);
}
server.listen(port, process.env.HOST || '127.0.0.1');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
