// Loopback HTTPS for tests of the outbound door: a self-signed certificate made at test time with
// openssl (for localhost and 127.0.0.1, valid one day) and small page servers.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import https from 'node:https';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Cert = { key: string; cert: string; certPath: string };

/** A fresh key and self-signed certificate for CN=localhost, SAN localhost and 127.0.0.1. */
export function selfSignedCert(): Cert {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-tls-'));
  const keyPath = path.join(dir, 'key.pem');
  const certPath = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-days', '1',
    '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'ignore' });
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath };
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export type PageServer = {
  port: number;
  /** `https://localhost:<port>` (or http:// for a plain server). */
  origin: string;
  /** Every request line seen, in order, as `METHOD /path`. */
  hits: string[];
  /** Every connection accepted (TCP), including ones that never sent a request. */
  connections: () => number;
  close: () => Promise<void>;
};

/** A loopback server (HTTPS when given a certificate) answering with `handler`. */
export async function pageServer(handler: Handler, cert?: Cert, host = '127.0.0.1'): Promise<PageServer> {
  const hits: string[] = [];
  let connections = 0;
  const onRequest: Handler = (req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  };
  const server = cert ? https.createServer({ key: cert.key, cert: cert.cert }, onRequest) : http.createServer(onRequest);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `${cert ? 'https' : 'http'}://localhost:${port}`,
    hits,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sends an HTML page. */
export function html(res: http.ServerResponse, body: string, status = 200, type = 'text/html; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}
