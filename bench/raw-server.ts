/**
 * The baseline: a bare node:http server that answers EVERY request with the same bytes, read
 * once from a file, and the same response headers as the service's answer (read from a JSON
 * file: the service's headers but those of the connection). What Node itself can
 * do on this machine for a body of that size, with no routing, auth, limits or serialization.
 *
 * Usage: node bench/raw-server.ts BODY_FILE HEADERS_FILE
 * Listens on 127.0.0.1 on a free port and prints `PORT <n>` on stdout once listening.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, headersFile] = process.argv.slice(2);
if (!bodyFile || !headersFile) {
  process.stderr.write('usage: node bench/raw-server.ts BODY_FILE HEADERS_FILE\n');
  process.exit(2);
}
const body = readFileSync(bodyFile);
const headers = {
  ...(JSON.parse(readFileSync(headersFile, 'utf8')) as Record<string, string>),
  'content-length': String(body.length),
};

const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`PORT ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
