// Settings (spec §2.10, §4.15): `weekStart` is the only writable field; platform blobs are
// stored (sealed) for first-party apps but never returned on read.
import { eq } from 'drizzle-orm';
import { settings } from '../../db/schema/index.js';
import type { Deps } from '../deps.js';
import type { Principal } from '../auth/credentials.js';
import { iso } from '../../core/clock.js';
import { openJson, rowAad, sealJson } from '../../core/crypto/seal.js';

export const WEEK_DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type WeekStart = (typeof WEEK_DAYS)[number];

type Sealed = { weekStart: WeekStart; platform: Record<string, string> };

const DEFAULTS: Sealed = { weekStart: 'monday', platform: {} };

const aad = (userId: string) => rowAad(userId, 'settings', userId);

function load(deps: Deps, p: Principal): { sealed: Sealed; updatedAt: number | null } {
  const row = deps.db.select().from(settings).where(eq(settings.userId, p.userId)).get();
  if (!row) return { sealed: { ...DEFAULTS, platform: {} }, updatedAt: null };
  return { sealed: openJson<Sealed>(p.dek, aad(p.userId), row.sealed), updatedAt: row.updatedAt };
}

function save(deps: Deps, p: Principal, value: Sealed): number {
  const now = deps.clock();
  const blob = sealJson(p.dek, aad(p.userId), value);
  deps.db
    .insert(settings)
    .values({ userId: p.userId, sealed: blob, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: settings.userId, set: { sealed: blob, updatedAt: now } })
    .run();
  return now;
}

/** The public view: never the platform blobs. */
function view(s: Sealed, updatedAt: number | null) {
  return { weekStart: s.weekStart, updatedAt: updatedAt == null ? null : iso(updatedAt) };
}

export function getSettings(deps: Deps, p: Principal) {
  const { sealed, updatedAt } = load(deps, p);
  return view(sealed, updatedAt);
}

export function updateSettings(deps: Deps, p: Principal, input: { weekStart: WeekStart }) {
  return deps.db.transaction(() => {
    const { sealed } = load(deps, p);
    const next = { ...sealed, weekStart: input.weekStart };
    return view(next, save(deps, p, next));
  });
}

/** First-party apps keep opaque per-platform state here; it is write-only through the API. */
export function putPlatformBlob(deps: Deps, p: Principal, input: { platform: string; blob: string }): void {
  deps.db.transaction(() => {
    const { sealed } = load(deps, p);
    save(deps, p, { ...sealed, platform: { ...sealed.platform, [input.platform]: input.blob } });
  });
}
