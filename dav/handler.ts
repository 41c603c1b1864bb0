// The CalDAV door's entry (issue 30; docs/caldav.md): `/.well-known/caldav` redirects to the DAV
// root (RFC 6764 §5), OPTIONS is answered without credentials, everything else under /dav is
// authenticated with HTTP Basic and an app password (dav/auth.ts), its body read under the cap,
// and dispatched to one small file per method. The door calls the same models as the routers,
// never HTTP to ourselves; server/handler.ts routes the paths here after the request id, the
// access log and the per-IP edge bucket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deps } from '../routers/deps.js';
import type { RateTracker } from '../routers/middleware/rate-limit.js';
import { authenticateDav } from './auth.js';
import { DavError, sendDavError } from './errors.js';
import { METHODS, options } from './options.js';
import { ROOT, WELL_KNOWN, parseDavPath } from './paths.js';
import { readBody, type DavRequest } from './request.js';
import { propfind } from './propfind.js';
import { proppatch } from './proppatch.js';
import { report } from './report.js';
import { get } from './get.js';
import { put } from './put.js';
import { del } from './delete.js';
import { mkcalendar } from './mkcalendar.js';
import { move } from './move.js';

/** What the process hands the door about the request (server/handler.ts). */
export type DavRequestInfo = { requestId: string; ip: string; rate?: RateTracker | undefined };

const BODY_METHODS = new Set(['PROPFIND', 'PROPPATCH', 'REPORT', 'PUT', 'MKCALENDAR', 'MKCOL']);

export function createDavHandler(deps: Deps): (req: IncomingMessage, res: ServerResponse, info: DavRequestInfo) => void {
  async function run(req: IncomingMessage, res: ServerResponse, info: DavRequestInfo, pathname: string): Promise<void> {
    const method = req.method ?? 'GET';
    if (pathname === WELL_KNOWN || pathname === `${WELL_KNOWN}/`) {
      req.resume();
      res.statusCode = 301;
      res.setHeader('Location', ROOT);
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    if (method === 'OPTIONS') {
      req.resume();
      return options(res);
    }
    const path = parseDavPath(pathname);
    if (!path) throw new DavError(404, 'No resource has this path.');
    if (pathname === '/dav') {
      res.statusCode = 301;
      res.setHeader('Location', ROOT);
      res.end();
      return;
    }
    const auth = await authenticateDav(deps, req.headers.authorization, info.rate, info.ip);
    const body = BODY_METHODS.has(method) ? await readBody(req) : (req.resume(), '');
    const r: DavRequest = { deps, p: auth.principal, auth, req, res, path, pathname, body };
    res.setHeader('DAV', '1, 3, calendar-access');
    switch (method) {
      case 'PROPFIND':
        return propfind(r);
      case 'PROPPATCH':
        return proppatch(r);
      case 'REPORT':
        return report(r);
      case 'GET':
        return get(r, false);
      case 'HEAD':
        return get(r, true);
      case 'PUT':
        return put(r);
      case 'DELETE':
        return del(r);
      case 'MKCALENDAR':
        return mkcalendar(r, false);
      case 'MKCOL':
        return mkcalendar(r, true);
      case 'MOVE':
        return move(r);
      default:
        throw new DavError(405, `${method} is not supported here.`, undefined, { Allow: METHODS });
    }
  }

  return (req, res, info) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    run(req, res, info, pathname).catch((e: unknown) => {
      if (!req.complete) req.resume();
      sendDavError(deps, info.requestId, pathname, res, e);
    });
  };
}
