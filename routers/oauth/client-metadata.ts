// Client ID Metadata Documents (issue 31 item 2; the MCP authorization spec's preferred
// registration, draft-ietf-oauth-client-id-metadata-document; docs/oauth.md "Client ID Metadata
// Documents"). A client_id that is an https URL names a JSON document its owner serves there;
// Cairn fetches it through the one outbound door (core/net: public addresses only, no redirect,
// at most 64 KiB in at most 5 s), checks it (its `client_id` is its own URL, `redirect_uris`
// follow the registration rules of ./redirect-uris.ts, public clients only), caches it per its
// Cache-Control / Expires within a floor and a ceiling, and keeps one `oauth_clients` row per URL
// so requests and grants reference it as they reference a registered client. The row's name is
// the URL's host: the only thing about such a client that is not self-asserted (the document's
// `client_name` is shown on the authorize page as an unverified name, nowhere else).
import type { IncomingHttpHeaders } from 'node:http';
import { eq } from 'drizzle-orm';
import { oauthClients } from '../../db/schema/index.js';
import type { Deps } from '../deps.js';
import { LIMITS } from '../../core/config.js';
import { outboundFetch, OutboundError, type OutboundOptions } from '../../core/net/index.js';
import { MAX_REDIRECT_URIS, redirectUriProblem } from './redirect-uris.js';

type Client = typeof oauthClients.$inferSelect;

const L = LIMITS.clientMetadata;

/** Why a metadata document cannot be used; the message is shown to the user (never a redirect). */
export class ClientMetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientMetadataError';
  }
}

/** What Cairn keeps of a document: what it checked and what it shows. */
export type ClientMetadata = { clientId: string; host: string; clientName: string | null; redirectUris: string[] };

/**
 * Whether a client_id names a metadata document rather than a registration (those are `cl_…`):
 * anything written as an absolute URL with a scheme and `//`, so an `http://` one is refused as
 * such (https only) instead of being an unknown client.
 */
export function isMetadataClientId(id: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(id);
}

/**
 * The client_id URL rules (draft §3): https, a path other than `/`, no fragment, no user
 * information, no dot segments, at most 2048 characters. It must be written as the WHATWG parser
 * writes it (lower-case host, no default port, no dot segments), since the document's `client_id`
 * is compared with it character for character.
 */
export function clientIdUrlProblem(raw: string): string | null {
  if (raw.length > L.urlMax) return `is longer than ${L.urlMax} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol !== 'https:') return 'must be an https URL (metadata documents are fetched over https only)';
  if (u.username || u.password) return 'must not carry user information';
  if (raw.includes('#')) return 'must not contain a fragment';
  if (u.pathname === '/' || u.pathname === '') return 'must have a path (the document is not the site root)';
  if (u.href !== raw) return `must be written in normalised form (${u.href}), with no dot segments`;
  return null;
}

// ---- Caching ----------------------------------------------------------------------------------

type Directives = Map<string, string | true>;

function directivesOf(header: string | string[] | undefined): Directives {
  const out: Directives = new Map();
  for (const part of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const [k, v] = part.split('=') as [string, string | undefined];
    const key = k.trim().toLowerCase();
    if (key) out.set(key, v === undefined ? true : v.trim().replace(/^"|"$/g, ''));
  }
  return out;
}

function seconds(v: string | true | undefined): number | null {
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null;
}

/**
 * How long a document stays cached, in ms (RFC 9111 §4.2.1, as a shared cache): `s-maxage`, else
 * `max-age`, else `Expires` − `Date` (or − now without a Date), less `Age`; `no-store`,
 * `no-cache`, `private` or no freshness information at all give the floor. Always within
 * [floor, ceiling]: the floor bounds how often one URL is fetched (an authorization and its code
 * exchange use one fetch), the ceiling how long a changed document goes unseen.
 */
export function cacheLifetimeMs(headers: IncomingHttpHeaders, now: number): number {
  const floor = L.cacheFloorSeconds * 1000;
  const ceiling = L.cacheCeilingSeconds * 1000;
  const cc = directivesOf(headers['cache-control']);
  if (cc.has('no-store') || cc.has('no-cache') || cc.has('private')) return floor;
  let ttl: number | null = seconds(cc.get('s-maxage')) ?? seconds(cc.get('max-age'));
  if (ttl !== null) ttl *= 1000;
  else if (typeof headers.expires === 'string') {
    const expires = Date.parse(headers.expires);
    const date = typeof headers.date === 'string' ? Date.parse(headers.date) : NaN;
    ttl = Number.isNaN(expires) ? 0 : expires - (Number.isNaN(date) ? now : date);
  }
  if (ttl === null) return floor;
  const age = Number(headers.age);
  if (Number.isFinite(age) && age > 0) ttl -= age * 1000;
  return Math.min(ceiling, Math.max(floor, ttl));
}

/** A bounded map of entries that expire by the injected clock; the least recently used goes first. */
export class MetadataCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  constructor(readonly maxEntries: number) {}

  get(key: string, now: number): T | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.until <= now) return undefined;
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: T, until: number, now: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      for (const [k, e] of this.entries) if (e.until <= now) this.entries.delete(k);
    }
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until });
  }

  get size(): number {
    return this.entries.size;
  }
}

type State = { cache: MetadataCache<ClientMetadata>; inFlight: Map<string, Promise<ClientMetadata>> };
// Per app (tests run several in one process), never a module global.
const STATES = new WeakMap<Deps, State>();
function stateOf(deps: Deps): State {
  let s = STATES.get(deps);
  if (!s) STATES.set(deps, (s = { cache: new MetadataCache(L.cacheEntries), inFlight: new Map() }));
  return s;
}

// ---- Fetching and checking --------------------------------------------------------------------

/** The outbound door's options for one document (exported for the test of the limits). */
export function fetchOptions(deps: Deps): OutboundOptions {
  return {
    method: 'GET',
    headers: { accept: 'application/json' },
    redirects: 0,
    deadlineMs: deps.config.clientMetadataDeadlineMs ?? L.deadlineMs,
    maxBytes: L.maxBytes,
    allowLoopback: deps.config.unsafeAllowLoopback,
    httpsOnly: true,
    ...deps.outbound,
  };
}

function fetchFailure(e: OutboundError, deadlineMs: number): string {
  switch (e.reason) {
    case 'timeout':
      return `it did not arrive within ${deadlineMs / 1000} s`;
    case 'too_large':
      return `it is larger than ${L.maxBytes / 1024} KiB`;
    case 'refused_address':
      return 'its host is not a public address';
    case 'dns':
      return 'its host name does not resolve';
    case 'tls':
      return 'its https certificate could not be verified';
    default:
      return 'the connection failed';
  }
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json$/;

/** Checks a parsed document against its URL; the reason it is refused, or its metadata. */
export function checkDocument(url: string, doc: unknown): ClientMetadata {
  const bad = (why: string) => new ClientMetadataError(`The metadata document ${why}.`);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw bad('is not a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.client_id !== url) throw bad(`names another client_id (${typeof d.client_id === 'string' ? d.client_id.slice(0, 200) : 'none'}) than its own URL`);
  // Draft §4.1: a document is public, so it never carries a shared secret; Cairn takes public
  // clients only (PKCE, no client authentication), as for `none` at registration.
  if ('client_secret' in d || 'client_secret_expires_at' in d) throw bad('must not contain a client_secret');
  const method = d.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') throw bad('must declare token_endpoint_auth_method none (Cairn takes metadata-document clients as public clients with PKCE)');
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw bad('has no redirect_uris (a non-empty array)');
  if (uris.length > MAX_REDIRECT_URIS) throw bad(`has more than ${MAX_REDIRECT_URIS} redirect_uris`);
  uris.forEach((u, i) => {
    const p = redirectUriProblem(u);
    if (p) throw bad(`has an unacceptable redirect_uris[${i}]: it ${p}`);
  });
  const name = d.client_name;
  if (name !== undefined && (typeof name !== 'string' || !name.trim() || name.length > 256)) throw bad('has a client_name that is not a string of 1 to 256 characters');
  const gt = d.grant_types;
  if (gt !== undefined && (!Array.isArray(gt) || gt.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))) throw bad('lists grant_types other than authorization_code and refresh_token');
  const rt = d.response_types;
  if (rt !== undefined && (!Array.isArray(rt) || rt.some((r) => r !== 'code'))) throw bad('lists response_types other than code');
  return { clientId: url, host: new URL(url).host, clientName: typeof name === 'string' ? name.trim() : null, redirectUris: [...new Set(uris as string[])] };
}

async function fetchDocument(deps: Deps, url: string): Promise<{ meta: ClientMetadata; until: number }> {
  const opts = fetchOptions(deps);
  const where = `The app's metadata document (${url})`;
  let res;
  try {
    res = await outboundFetch(url, opts);
  } catch (e) {
    if (e instanceof OutboundError) throw new ClientMetadataError(`${where} cannot be used: ${fetchFailure(e, opts.deadlineMs)}.`);
    throw e;
  }
  if (res.status >= 300 && res.status < 400) throw new ClientMetadataError(`${where} answered ${res.status}: redirects are not followed.`);
  if (res.status !== 200) throw new ClientMetadataError(`${where} answered ${res.status} instead of 200.`);
  const ct = res.headers['content-type'];
  const type = (Array.isArray(ct) ? ct[0] : ct)?.split(';')[0]!.trim().toLowerCase() ?? '';
  if (!JSON_TYPE.test(type)) throw new ClientMetadataError(`${where} is served as ${type || 'no type'}, not application/json.`);
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(res.body));
  } catch {
    throw new ClientMetadataError(`${where} is not valid JSON.`);
  }
  let meta: ClientMetadata;
  try {
    meta = checkDocument(url, doc);
  } catch (e) {
    if (e instanceof ClientMetadataError) throw new ClientMetadataError(`${where} cannot be used: ${e.message.replace(/^The metadata document /, 'it ')}`);
    throw e;
  }
  const now = deps.clock();
  return { meta, until: now + cacheLifetimeMs(res.headers, now) };
}

/**
 * The client a metadata-document client_id names: from the cache, or fetched, checked, cached and
 * its row written (upserted: a changed document changes the row's callbacks). Throws
 * ClientMetadataError with a sentence for the user.
 */
export async function resolveMetadataClient(deps: Deps, clientId: string): Promise<{ client: Client; meta: ClientMetadata }> {
  const problem = clientIdUrlProblem(clientId);
  if (problem) throw new ClientMetadataError(`The client_id ${clientId.slice(0, 200)} ${problem}.`);
  const st = stateOf(deps);
  let meta = st.cache.get(clientId, deps.clock());
  if (!meta) {
    // One fetch per URL at a time: concurrent requests share it.
    let pending = st.inFlight.get(clientId);
    if (!pending) {
      pending = fetchDocument(deps, clientId).then(({ meta: m, until }) => {
        st.cache.set(clientId, m, until, deps.clock());
        writeRow(deps, m);
        return m;
      });
      pending.finally(() => st.inFlight.delete(clientId)).catch(() => {});
      st.inFlight.set(clientId, pending);
    }
    meta = await pending;
  }
  const client = deps.db.select().from(oauthClients).where(eqId(clientId)).get();
  // The row is written with every fetch; a cached document without it (never expected) is written now.
  if (!client) {
    writeRow(deps, meta);
    return { client: deps.db.select().from(oauthClients).where(eqId(clientId)).get()!, meta };
  }
  return { client, meta };
}

const eqId = (id: string) => eq(oauthClients.id, id);

function writeRow(deps: Deps, m: ClientMetadata): void {
  const redirectUris = JSON.stringify(m.redirectUris);
  deps.db
    .insert(oauthClients)
    .values({ id: m.clientId, name: m.host, redirectUris, authMethod: 'none', secretHash: null, createdAt: deps.clock() })
    .onConflictDoUpdate({ target: oauthClients.id, set: { name: m.host, redirectUris, authMethod: 'none', secretHash: null } })
    .run();
}
