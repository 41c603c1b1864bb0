// What every method of the CalDAV door shares: the request as the methods see it, the body read
// under its cap, multistatus answers written as they are produced (a large collection's PROPFIND
// or REPORT never sits whole in memory), ETag preconditions, and writes through the same
// transaction path as the routers (routers/middleware/atomic.ts: one IMMEDIATE transaction, the
// credential checked live inside it, group commit).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { queueWrite } from '../routers/middleware/atomic.js';
import { LIMITS } from '../core/config.js';
import { DavError } from './errors.js';
import type { DavAuth } from './auth.js';
import { limitWrite } from './auth.js';
import type { DavPath } from './paths.js';
import { MULTISTATUS_CLOSE, MULTISTATUS_OPEN } from './xml.js';

export type DavRequest = {
  deps: Deps;
  p: Principal;
  auth: DavAuth;
  req: IncomingMessage;
  res: ServerResponse;
  path: DavPath;
  pathname: string;
  body: string;
};

/** Reads the body as UTF-8, refusing more than LIMITS.dav.bodyBytes (413) while it streams. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > LIMITS.dav.bodyBytes) {
      req.resume();
      reject(new DavError(413, `A CalDAV request body is at most ${LIMITS.dav.bodyBytes} bytes.`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > LIMITS.dav.bodyBytes) {
        done = true;
        req.resume();
        reject(new DavError(413, `A CalDAV request body is at most ${LIMITS.dav.bodyBytes} bytes.`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (e) => {
      if (!done) reject(e);
    });
  });
}

/** Writes a 207 multistatus from an iterable of `<D:response>` strings, honouring backpressure. */
export async function sendMultistatus(res: ServerResponse, parts: Iterable<string>, tail = ''): Promise<void> {
  res.statusCode = 207;
  res.setHeader('Content-Type', 'application/xml; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  let buf = MULTISTATUS_OPEN;
  for (const part of parts) {
    buf += part;
    if (buf.length >= 64 * 1024) {
      const ok = res.write(buf);
      buf = '';
      if (!ok) await new Promise<void>((resolve) => res.once('drain', resolve));
    }
  }
  res.end(buf + tail + MULTISTATUS_CLOSE);
}

/** Runs a write as the routers do (queued, one IMMEDIATE transaction, credential re-checked). */
export function write<T>(r: DavRequest, run: () => T): Promise<T> {
  limitWrite(r.auth);
  return queueWrite({ deps: r.deps, principal: r.p, http: { headers: {} } }, run);
}

/** The path names something of this user (another user's id is answered like a missing path). */
export function ownPath(r: DavRequest): void {
  if (r.path.kind !== 'root' && r.path.userId !== r.p.userId) throw new DavError(404, 'No resource has this path.');
}

function etags(header: string | string[] | undefined): string[] | null {
  if (header === undefined) return null;
  const v = Array.isArray(header) ? header.join(',') : header;
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * If-Match / If-None-Match (RFC 9110 §13.1) against the current ETag (null: no resource); 412 when
 * they fail. Strong comparison; `*` matches any existing resource.
 */
export function checkPreconditions(req: IncomingMessage, current: string | null): void {
  const match = etags(req.headers['if-match']);
  if (match) {
    const ok = current !== null && (match.includes('*') || match.includes(`"${current}"`));
    if (!ok) throw new DavError(412, 'The resource changed since the client read it (If-Match).');
  }
  const none = etags(req.headers['if-none-match']);
  if (none && current !== null && (none.includes('*') || none.includes(`"${current}"`))) {
    throw new DavError(412, 'The resource exists (If-None-Match).');
  }
}
