// The one door for outbound HTTP (docs/security.md "The outbound door", docs/architecture.md).
// Nothing else in the code opens an outbound connection. Every address a socket may connect to is
// checked on that socket: names through the `lookup` the socket itself calls (every address of an
// `all: true` answer must pass, so a name cannot answer a public address to a check and a private
// one to the connect), IP literals (which skip lookup) before the request. No proxy from the
// environment, no cookies, no credentials; redirects only when asked, each hop re-checked; one
// deadline and one byte cap per call.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { promises as dnsPromises, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { ipLiteral, refusalOf } from './address.js';

/** Resolves a name to every address it has (tests inject a stub; the default asks the system). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** An address handed to a socket (after every check), for tests that watch the connect step. */
export type ConnectAttempt = { hostname: string; address: string; port: number };

export type OutboundReason =
  | 'invalid_url' // not a URL, not http/https, or carries userinfo
  | 'refused_address' // an address is not public unicast
  | 'dns' // the name does not resolve
  | 'timeout' // the deadline passed
  | 'too_large' // the body passed the byte cap
  | 'too_many_redirects'
  | 'tls' // certificate or handshake failure
  | 'network'; // anything else on the wire

export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundReason,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** The hard ceiling on redirects a caller may ask for (spec §4.16: max 5). */
export const MAX_REDIRECTS = 5;

export type OutboundHead = { status: number; headers: IncomingHttpHeaders; url: URL; redirects: number };

export type OutboundOptions = {
  method?: 'GET' | 'POST' | 'HEAD';
  /** Request headers; `authorization`, `cookie` and `proxy-authorization` are never sent. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Redirects to follow (0..5); 0, the default, answers a 3xx as it is. */
  redirects?: number;
  /** The whole call, every hop and the body included. */
  deadlineMs: number;
  /** Body bytes read at most; past it the socket is destroyed and the call fails `too_large`. */
  maxBytes: number;
  /** CAIRN_UNSAFE_ALLOW_LOOPBACK: 127.0.0.0/8 and ::1 pass too (tests); nothing else. */
  allowLoopback: boolean;
  /** Every hop's `http:` is fetched as `https:` (link titles, spec §4.16). */
  httpsOnly?: boolean;
  /** Called with the final answer's head; false skips its body (the socket is destroyed). */
  wantBody?: (head: OutboundHead) => boolean;
  /** Receives the body as it arrives instead of buffering it; true stops reading (not an error). */
  onChunk?: (chunk: Buffer) => boolean | void;
  /** Test-only: the name resolver (default: the system's, every address). */
  resolver?: Resolver | undefined;
  /** Test-only: extra trusted CA certificates for https (the process trusts NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer | undefined;
  /** Test-only: told of every address handed to a socket, after the checks. */
  onConnect?: ((attempt: ConnectAttempt) => void) | undefined;
};

export type OutboundResponse = OutboundHead & {
  /** The body when neither `onChunk` nor `wantBody` took it; otherwise empty. */
  body: Buffer;
  bytes: number;
  /** True when the body was read to its end. */
  complete: boolean;
};

const systemResolver: Resolver = async (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

const NEVER_SENT = new Set(['authorization', 'cookie', 'proxy-authorization', 'host']);

/** Parses and vets one hop's URL: WHATWG parsing (so 2130706433, 0x7f.1, 127.1 normalise first), http/https, no userinfo. */
export function checkUrl(input: string | URL, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    throw new OutboundError('invalid_url', 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('invalid_url', `scheme ${url.protocol} refused`);
  if (url.username || url.password) throw new OutboundError('invalid_url', 'userinfo refused');
  if (!url.hostname) throw new OutboundError('invalid_url', 'no host');
  return url;
}

function toHttps(url: URL): URL {
  if (url.protocol === 'https:') return url;
  // The port stays as written: an explicit port is the server's choice, a default one becomes 443.
  const next = new URL(url.href);
  next.protocol = 'https:';
  return next;
}

function classifyError(err: NodeJS.ErrnoException, refused: OutboundError | null, timedOut: boolean): OutboundError {
  if (refused) return refused;
  if (timedOut) return new OutboundError('timeout', 'deadline passed');
  if (err instanceof OutboundError) return err;
  const code = String(err.code ?? '');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return new OutboundError('dns', 'name does not resolve');
  if (/CERT|SSL|TLS|SIG|HOSTNAME|ALTNAME|VERIFY/.test(code)) return new OutboundError('tls', `TLS: ${code}`);
  return new OutboundError('network', code || 'connection failed');
}

/**
 * One outbound HTTP call through the door. Resolves with the final answer (any status); rejects
 * with an OutboundError saying why nothing usable came back.
 */
export async function outboundFetch(input: string | URL, opts: OutboundOptions): Promise<OutboundResponse> {
  const maxRedirects = Math.max(0, Math.min(MAX_REDIRECTS, opts.redirects ?? 0));
  const resolver = opts.resolver ?? systemResolver;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.deadlineMs);
  try {
    let url = checkUrl(input);
    let method = opts.method ?? 'GET';
    let body = opts.body;
    for (let redirects = 0; ; redirects++) {
      if (opts.httpsOnly) url = toHttps(url);
      const { res, destroy } = await sendOne(url, method, body, opts, resolver, controller.signal, () => timedOut);
      const location = res.headers.location;
      if (maxRedirects > 0 && [301, 302, 303, 307, 308].includes(res.statusCode ?? 0) && location) {
        destroy();
        if (redirects >= maxRedirects) throw new OutboundError('too_many_redirects', `more than ${maxRedirects} redirects`);
        url = checkUrl(location, url);
        // RFC 9110 §15.4: 303 (and, as browsers do, 301/302 after a POST) continue as a GET.
        if (res.statusCode === 303 || (method === 'POST' && res.statusCode !== 307 && res.statusCode !== 308)) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      const head: OutboundHead = { status: res.statusCode ?? 0, headers: res.headers, url, redirects };
      if (opts.wantBody && !opts.wantBody(head)) {
        destroy();
        return { ...head, body: Buffer.alloc(0), bytes: 0, complete: false };
      }
      return { ...head, ...(await readBody(res, destroy, opts, () => timedOut)) };
    }
  } finally {
    clearTimeout(timer);
  }
}

/** One request on its own socket (no agent pool, so nothing is reused across checks). */
function sendOne(
  url: URL,
  method: string,
  body: string | Buffer | undefined,
  opts: OutboundOptions,
  resolver: Resolver,
  signal: AbortSignal,
  timedOut: () => boolean,
): Promise<{ res: IncomingMessage; destroy: () => void }> {
  const secure = url.protocol === 'https:';
  const port = url.port ? Number(url.port) : secure ? 443 : 80;
  const literal = ipLiteral(url.hostname);
  const host = literal ?? url.hostname;
  let refused: OutboundError | null = null;

  if (literal) {
    // A literal IP skips `lookup`: it is checked here, and it is the address the socket connects to.
    const why = refusalOf(literal, { allowLoopback: opts.allowLoopback });
    if (why) return Promise.reject(new OutboundError('refused_address', why));
    opts.onConnect?.({ hostname: host, address: literal, port });
  }

  // The socket's own resolution: every address must pass, and only these addresses are connected to.
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolver(hostname).then(
      (found) => {
        if (!found.length) {
          callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', 4);
          return;
        }
        const addresses: LookupAddress[] = [];
        for (const a of found) {
          const why = refusalOf(a.address, { allowLoopback: opts.allowLoopback });
          if (why) {
            refused = new OutboundError('refused_address', why);
            callback(refused, '', 4);
            return;
          }
          addresses.push({ address: a.address, family: a.family === 6 ? 6 : 4 });
        }
        for (const a of addresses) opts.onConnect?.({ hostname, address: a.address, port });
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(Object.assign(new Error('no address'), { code: err.code ?? 'ENOTFOUND' }), '', 4),
    );
  };

  const headers: Record<string, string> = { 'user-agent': 'Cairn', 'accept-encoding': 'identity', connection: 'close' };
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (!NEVER_SENT.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = {
      method,
      hostname: host,
      port,
      path: url.pathname + url.search,
      headers,
      lookup,
      // No pooled or global agent: nothing set on http.globalAgent (a proxy agent, say) applies,
      // and every hop gets a fresh socket through the checks above.
      agent: false,
      signal,
      ...(secure && opts.ca ? { ca: opts.ca } : {}),
    };
    const req = (secure ? https : http).request(options);
    req.on('response', (res) => resolve({ res, destroy: () => req.destroy() }));
    req.on('error', (err) => reject(classifyError(err, refused, timedOut())));
    req.end(body);
  });
}

function readBody(
  res: IncomingMessage,
  destroy: () => void,
  opts: OutboundOptions,
  timedOut: () => boolean,
): Promise<{ body: Buffer; bytes: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      fn();
    };
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = opts.maxBytes - bytes;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      bytes += part.length;
      let stop = false;
      try {
        if (part.length && opts.onChunk) stop = opts.onChunk(part) === true;
        else if (part.length) chunks.push(part);
      } catch (err) {
        // A throwing consumer must not become an uncaught exception in this event handler.
        destroy();
        finish(() => reject(err));
        return;
      }
      if (stop) {
        destroy();
        finish(() => resolve({ body: Buffer.concat(chunks), bytes, complete: false }));
      } else if (chunk.length > room) {
        destroy();
        finish(() => reject(new OutboundError('too_large', `body past ${opts.maxBytes} bytes`)));
      }
    });
    res.on('end', () => finish(() => resolve({ body: Buffer.concat(chunks), bytes, complete: true })));
    const fail = (err: Error) => finish(() => reject(classifyError(err, null, timedOut())));
    res.on('error', fail);
    res.on('aborted', () => fail(new Error('aborted')));
    res.on('close', () => {
      if (!res.complete) fail(new Error('connection closed'));
    });
  });
}

/**
 * Checks a target without connecting (webhook subscriptions at create and update): the URL
 * parses, and every address its name resolves to (or its literal) passes the same rule the
 * connect-time check applies. A send checks again on its own socket, so a name whose addresses
 * change later is still refused then.
 */
export async function checkTarget(input: string, opts: { allowLoopback: boolean; resolver?: Resolver | undefined }): Promise<void> {
  const url = checkUrl(input);
  const literal = ipLiteral(url.hostname);
  const addresses = literal ? [literal] : await (opts.resolver ?? systemResolver)(url.hostname).then(
    (found) => found.map((a) => a.address),
    () => {
      throw new OutboundError('dns', 'name does not resolve');
    },
  );
  if (!addresses.length) throw new OutboundError('dns', 'name does not resolve');
  for (const a of addresses) {
    const why = refusalOf(a, { allowLoopback: opts.allowLoopback });
    if (why) throw new OutboundError('refused_address', why);
  }
}
