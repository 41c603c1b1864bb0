// Personal access tokens (spec §4.14, §5.1).
import { and, asc, eq, gt, gte, isNull, count } from 'drizzle-orm';
import { credentials } from '../../db/schema/index.js';
import { finishPage, pageConditions, type ListQuery, type PageSpec } from '../../db/paging.js';
import type { Deps } from '../deps.js';
import { AppError, notFound } from '../../core/errors.js';
import { LIMITS, RATE_BUCKETS, scaleBucket } from '../../core/config.js';
import { newId } from '../../core/ids.js';
import { iso, isoOrNull } from '../../core/clock.js';
import { insertCredential, patToken, type Principal } from '../auth/credentials.js';
import type { Door } from '../auth/principal.js';
import { DAV_SCOPES } from './schema.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';

const DAY = 86_400_000;

type Row = typeof credentials.$inferSelect;

function nameOf(dek: Buffer, row: Row): string {
  return row.sealed ? openJson<{ name: string }>(dek, rowAad(row.userId, 'credentials', row.id), row.sealed).name : '';
}

function toKey(dek: Buffer, row: Row) {
  return {
    id: row.id,
    name: nameOf(dek, row),
    scopes: JSON.parse(row.scopes) as string[],
    audience: row.audience,
    createdAt: iso(row.createdAt),
    expiresAt: iso(row.expiresAt),
    lastUsedAt: isoOrNull(row.lastUsedAt),
  };
}

const activeWhere = (userId: string, now: number) =>
  and(eq(credentials.userId, userId), eq(credentials.kind, 'pat'), isNull(credentials.revokedAt), gt(credentials.expiresAt, now));

export function createKey(
  deps: Deps,
  p: Principal,
  input: { name: string; scopes?: string[] | undefined; audience?: Door | undefined; expiresInDays: number },
) {
  const audience = input.audience ?? 'rest';
  const scopes = audience === 'dav' ? [...DAV_SCOPES] : input.scopes!;
  const now = deps.clock();
  const dayStart = Math.floor(now / DAY) * DAY;
  return deps.db.transaction((tx) => {
    // spec §5.1 rule 4, §8.1: at most 10 created per (UTC) day, revoked ones included; a rate
    // limit, so CAIRN_RATE_LIMIT_FACTOR scales it like every other budget (DECISIONS §1).
    const perDay = (scaleBucket(RATE_BUCKETS.keyCreate, deps.config.rateLimitFactor) as { limit: number }).limit;
    const today = tx
      .select({ n: count() })
      .from(credentials)
      .where(and(eq(credentials.userId, p.userId), eq(credentials.kind, 'pat'), gte(credentials.createdAt, dayStart)))
      .get()!.n;
    if (today >= perDay) {
      const retry = Math.ceil((dayStart + DAY - now) / 1000);
      throw new AppError('rate_limited', `At most ${perDay} personal tokens can be created per day.`, {
        headers: { 'Retry-After': String(retry) },
      });
    }
    // spec §5.1 rule 4: at most 25 active at a time.
    const active = tx.select({ n: count() }).from(credentials).where(activeWhere(p.userId, now)).get()!.n;
    if (active >= LIMITS.personalTokens.active) {
      throw new AppError('conflict', `At most ${LIMITS.personalTokens.active} personal tokens can be active; revoke one first.`);
    }
    const expiresAt = now + input.expiresInDays * DAY;
    const id = newId();
    const { secret } = insertCredential(tx, deps, {
      id,
      userId: p.userId,
      dek: p.dek,
      kind: 'pat',
      scopes,
      audience,
      expiresAt,
      sealedName: sealJson(p.dek, rowAad(p.userId, 'credentials', id), { name: input.name }),
    });
    return {
      id,
      name: input.name,
      scopes,
      audience,
      createdAt: iso(now),
      expiresAt: iso(expiresAt),
      token: patToken(secret),
    };
  });
}

/** Active tokens, oldest first. The secret is in no answer but the creation one. */
export function listKeys(deps: Deps, p: Principal, query: ListQuery) {
  const spec: PageSpec = {
    key: deps.keys.cursor,
    scope: `${p.userId}:keys`,
    query,
    sortCol: credentials.createdAt,
    idCol: credentials.id,
    updatedCol: credentials.createdAt,
    numericSort: true,
  };
  const { where, fetch, limit } = pageConditions(spec);
  const rows = deps.db
    .select()
    .from(credentials)
    .where(and(activeWhere(p.userId, deps.clock()), ...where))
    .orderBy(asc(credentials.createdAt), asc(credentials.id))
    .limit(fetch)
    .all();
  return finishPage(spec, rows, limit, (r) => ({ k: String(r.createdAt), i: r.id }), (r) => toKey(p.dek, r));
}

/** Revoking drops the wrapped key at once: the token can never unwrap the data key again. */
export function revokeKey(deps: Deps, p: Principal, id: string): void {
  const res = deps.db
    .update(credentials)
    .set({ wrappedKey: null, revokedAt: deps.clock() })
    .where(and(eq(credentials.userId, p.userId), eq(credentials.id, id), eq(credentials.kind, 'pat'), isNull(credentials.revokedAt)))
    .run();
  if (res.changes === 0) throw notFound('Key');
}
