// The process's request listener (issue 12): what every request gets, then the route. /v1 and
// /trpc are served on node:http directly (rest/v1.ts, rest/trpc.ts), with no Express layer;
// everything else (/healthz, /.well-known, /openapi.json, /docs, /errors, the 404/405 answers, and
// the /trpc requests rest/trpc.ts leaves to tRPC's own adapter) goes to the Express app.
//
// Every request, whichever way it goes: a request id (X-Request-Id), the access log line
// (method, path, procedure, status, duration; never query strings, bodies or headers), the client
// address (the socket's, or X-Forwarded-For from CAIRN_TRUST_PROXY, as Express's `req.ip` reads
// it: the same proxy-addr rules), CORS for /v1 and /trpc (rest/cors.ts), the per-IP edge bucket
// with RateLimit-* headers (spec §8.1), and the refusal of dot segments (issue 11.11).
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import proxyaddr from 'proxy-addr';
import { newRequestId } from '../core/ids.js';
import { accessLogger } from '../core/logger.js';
import type { Deps } from '../routers/deps.js';
import { AppError } from '../core/errors.js';
import { createApp } from './app.js';
import { createV1Handler } from '../rest/v1.js';
import { createTrpcHandler } from '../rest/trpc.js';
import { edgeLimit, rateTrackerOf } from '../rest/rate-limit.js';
import type { DavRequestInfo } from '../dav/handler.js';
import { isDavPath } from '../dav/paths.js';
import { isMcpPath } from '../mcp/paths.js';
import { hasDotSegment } from '../rest/paths.js';
import { corsHeaders, preflight } from '../rest/cors.js';
import { sendProblem } from '../rest/send.js';
import { initRequestState } from '../rest/state.js';
import { loggedPath } from './access-path.js';
import { METRICS_PATH, metricsFor, routeLabel } from './metrics.js';

const V1 = /^\/v1(?:[/?]|$)/;
const noop = () => {};

/**
 * The same trust rules as Express's `trust proxy` setting (an address list, CIDR, or named ranges);
 * null when no proxy is trusted, where the client is the socket's peer (what proxy-addr answers
 * then, without parsing X-Forwarded-For for nothing).
 */
function trustFor(deps: Deps): ((addr: string, i: number) => boolean) | null {
  const list = deps.config.trustProxy ? deps.config.trustProxy.split(',').map((s) => s.trim()) : [];
  return list.length ? proxyaddr.compile(list) : null;
}

type Door = (req: IncomingMessage, res: ServerResponse, info: DavRequestInfo) => void;

/**
 * A door whose code is loaded on its first request, not at start: the MCP SDK and the CalDAV
 * door hold ~12 and ~5 MB of a process that no assistant or calendar app may ever call
 * (issue 29's peak RSS; docs/performance.md "Memory"). Requests that arrive while it loads wait
 * for the same load; a load that fails is answered as a problem and tried again next time.
 */
export function lazyDoor(deps: Deps, load: () => Promise<Door>): Door {
  let door: Promise<Door> | undefined;
  return (req, res, info) => {
    (door ??= load()).then(
      (run) => run(req, res, info),
      (err: unknown) => {
        door = undefined;
        sendProblem(deps, req as Request, res as Response, err);
      },
    );
  };
}

export function createRequestHandler(deps: Deps): RequestListener {
  const app = createApp(deps);
  const v1 = createV1Handler(deps);
  const trpc = createTrpcHandler(deps);
  const dav = lazyDoor(deps, async () => (await import('../dav/handler.js')).createDavHandler(deps));
  const mcp = lazyDoor(deps, async () => (await import('../mcp/door.js')).createMcpDoor(deps));
  const edge = edgeLimit(deps);
  const trust = trustFor(deps);
  const log = accessLogger(deps.log);
  // Issue 33 item 4 (server/metrics.ts): null unless CAIRN_METRICS=1, and then /metrics is no path.
  const metrics = metricsFor(deps);

  return (req: IncomingMessage, res: ServerResponse) => {
    const ip = (trust ? proxyaddr(req, trust) : req.socket.remoteAddress) ?? req.socket.remoteAddress ?? '';
    const state = initRequestState(req as Request, newRequestId(), ip);
    res.setHeader('X-Request-Id', state.requestId);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - state.start) / 1e6;
      const procedure = state.procedure ?? state.ctx?.http.procedure;
      log.info(
        { requestId: state.requestId, method: req.method, path: loggedPath(req.url ?? ''), route: procedure, status: res.statusCode, durationMs: Math.round(ms * 100) / 100 },
        'request',
      );
      // Labelled by the matched procedure or a fixed route name, never the path (server/metrics.ts).
      metrics?.observeRequest(routeLabel(req.url ?? '', procedure), req.method, res.statusCode, ms);
    });
    // Browser clients (rest/cors.ts): CORS headers before the edge bucket, so refusals (429
    // included) carry them; a preflight is answered after it, so it carries RateLimit-*.
    corsHeaders(req as Request, res as Response, noop);
    edge(req as Request, res as Response, (err?: unknown) => {
      if (err) return sendProblem(deps, req as Request, res as Response, err);
      preflight(req as Request, res as Response, () => {
        const url = req.url ?? '';
        if (hasDotSegment(url)) {
          return sendProblem(deps, req as Request, res as Response, new AppError('not_found', 'No route matches this path: dot segments (".", "..") are not resolved.'));
        }
        if (metrics && (url === METRICS_PATH || url.startsWith(`${METRICS_PATH}?`))) return metrics.serve(req, res);
        // The CalDAV door (issue 30, dav/handler.ts): /dav/… and /.well-known/caldav.
        if (isDavPath(url)) return dav(req, res, { requestId: state.requestId, ip: state.ip, rate: rateTrackerOf(req as Request) });
        // The MCP door (issue 31, mcp/door.ts): /mcp and /.well-known/oauth-protected-resource/mcp.
        if (isMcpPath(url)) return mcp(req, res, { requestId: state.requestId, ip: state.ip, rate: rateTrackerOf(req as Request) });
        if (V1.test(url)) return v1(req, res, () => app(req, res));
        if (url.startsWith('/trpc/')) return trpc(req, res, () => app(req, res));
        app(req, res);
      });
    });
  };
}
