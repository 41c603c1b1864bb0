// Scopes (spec §5.3). A write scope implies its read scope (rule 1); the `tasks:*` umbrellas
// cover every content scope, notes and settings included, but never `sessions:*` or
// `webhooks:write` (rule 2); `webhooks:write` covers reads of webhooks (rule 3).
import { z } from 'zod';

export const CONTENT_AREAS = ['todos', 'containers', 'notes', 'inbox', 'tags', 'attachments', 'filters', 'settings'] as const;

export const SCOPES = [
  ...CONTENT_AREAS.flatMap((a) => [`${a}:read`, `${a}:write`] as const),
  'sessions:read',
  'sessions:write',
  'webhooks:write',
  'tasks:read',
  'tasks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const ScopeSchema = z.enum(SCOPES);

// Every request expands its credential's granted list; there are few distinct lists, so each
// expansion is kept (scope names are public, nothing here is secret or content).
const EXPANDED = new Map<string, ReadonlySet<Scope>>();
const EXPANDED_MAX = 256;

/** Every scope a granted list actually allows (read-only: the set may be shared). */
export function expandScopes(granted: readonly string[]): ReadonlySet<Scope> {
  const key = granted.join(' ');
  let out = EXPANDED.get(key);
  if (!out) {
    out = expand(granted);
    if (EXPANDED.size >= EXPANDED_MAX) EXPANDED.clear();
    EXPANDED.set(key, out);
  }
  return out;
}

function expand(granted: readonly string[]): Set<Scope> {
  const out = new Set<Scope>();
  const add = (s: string) => {
    if ((SCOPES as readonly string[]).includes(s)) out.add(s as Scope);
  };
  for (const s of granted) {
    add(s);
    const [area, level] = s.split(':');
    if (level === 'write') add(`${area}:read`);
    if (area === 'tasks') {
      for (const a of CONTENT_AREAS) {
        add(`${a}:read`);
        if (level === 'write') add(`${a}:write`);
      }
    }
  }
  return out;
}

/** First-party sessions hold every scope. */
export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);
