// (A) The ceiling: a bare node:http server that reads the request body (if any) and answers a
// fixed small JSON. Started by run.ts as its own process; reports its port over IPC.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const BODY = Buffer.from(JSON.stringify({ ok: true, service: 'bare-node-http' }));

const server = createServer((req, res) => {
  // Drain the body like any real server must before answering on a keep-alive connection.
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
    res.end(BODY);
  });
});
server.keepAliveTimeout = 5_000;

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});

// Never outlive the bench: when the parent goes away (even killed), stop.
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
