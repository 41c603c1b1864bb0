// The HTTP server around the Express app. Requests Node's parser refuses never reach Express, so
// their answers are written here (issue 11.10): a problem body for every refusal, as everywhere
// else (spec §7), instead of Node's bare 400/431 with no body.
import { createServer, type Server, type RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import type { Deps } from '../routers/deps.js';
import { AppError, type ErrorCode } from '../core/errors.js';
import { newRequestId } from '../core/ids.js';
import { finishProblem, toProblem } from '../routers/middleware/problems.js';

function clientErrorCode(code: string | undefined): { problem: ErrorCode; detail: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { problem: 'headers_too_large', detail: 'The request line and headers exceed 16 KiB.' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { problem: 'request_timeout', detail: 'The request did not arrive in time.' };
  return { problem: 'malformed_request', detail: 'The request could not be parsed as HTTP.' };
}

/** Answers what Node's HTTP parser refuses with a problem (the parser's `clientError` event). */
export function attachClientErrorHandler(server: Server, deps: Pick<Deps, 'config' | 'log'>): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or a socket already written to has no one left to answer (Node's own rule).
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const { problem: code, detail } = clientErrorCode(err.code);
    const requestId = newRequestId();
    const { problem } = toProblem(new AppError(code, detail));
    const body = JSON.stringify(finishProblem(problem, deps.config.publicUrl, requestId));
    deps.log.info({ requestId, status: problem.status, parserError: err.code }, 'request refused by the HTTP parser');
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
        'Content-Type: application/problem+json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Cache-Control: no-store\r\n' +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}

/**
 * The process's HTTP server: the app, the parser-refusal answers, and the connection timeouts
 * (issue 18.7, docs/operations.md "Connections and timeouts"):
 * - `headersTimeout`: the request line and headers must be complete within it (slow-loris
 *   headers); past it Node's parser refuses the request and it is answered 408 as a problem.
 * - `requestTimeout`: the whole request, body included (a body dribbled byte by byte), 408 too.
 * - `keepAliveTimeout`: an idle keep-alive connection is closed after it.
 * - the socket idle timeout: a connection on which nothing moves in either direction (a client
 *   that never reads its answer, so the server's writes stall) is destroyed after it.
 * Node checks the first two every `connectionsCheckingInterval`, set to a quarter of the headers
 * timeout (at most 1 s) so they hold to within that.
 */
export function createHttpServer(app: RequestListener | undefined, deps: Pick<Deps, 'config' | 'log'>): Server {
  const t = deps.config.httpTimeouts;
  const server = createServer({
    headersTimeout: t.headersMs,
    requestTimeout: t.requestMs,
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(t.headersMs / 4))),
  });
  server.keepAliveTimeout = t.keepAliveMs;
  if (app) server.on('request', app);
  server.setTimeout(t.socketIdleMs, (socket) => socket.destroy());
  attachClientErrorHandler(server, deps);
  return server;
}
