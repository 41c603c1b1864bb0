// A loopback HTTPS webhook receiver for tests: records every request (headers and raw body) and
// answers as `answer` says (a status, a redirect, or nothing at all: a hang).
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Cert } from '../helpers/tls.js';

export type Received = { path: string; headers: http.IncomingHttpHeaders; body: string; answered: Answer };
export type Answer = number | 'hang' | { redirect: string };

export type Receiver = {
  port: number;
  url: (path?: string) => string;
  got: Received[];
  answer: Answer;
  connections: () => number;
  close: () => Promise<void>;
};

export async function receiver(cert: Cert, answer: Answer = 200, host = '127.0.0.1'): Promise<Receiver> {
  const got: Received[] = [];
  let connections = 0;
  const r: Receiver = {
    port: 0,
    url: (p = '/hook') => `https://${host}:${r.port}${p}`,
    got,
    answer,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const a = r.answer;
      got.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), answered: a });
      if (a === 'hang') return;
      if (typeof a === 'object') res.writeHead(302, { location: a.redirect }).end();
      else res.writeHead(a, { 'content-type': 'text/plain' }).end('secret receiver body');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  r.port = (server.address() as AddressInfo).port;
  return r;
}

/** Waits (polling, real time) until `cond` holds; for I/O arriving, never for time rules. */
export async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
