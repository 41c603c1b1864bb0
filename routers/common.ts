// Field schemas shared by several resources (spec §2 general rules).
import { z } from 'zod';
import { LIMITS } from '../core/config.js';
import { UUID_UPPER } from '../core/ids.js';
import { isCalendarDate } from '../core/calendar.js';

/** Spec §2 rule 3: six hex digits with or without a leading '#', max 16 characters. */
export const ColorHex = z
  .string()
  .max(LIMITS.colorHex)
  .regex(/^#?[0-9A-Fa-f]{6}$/, 'must be six hex digits, with or without a leading #');

/**
 * Names and titles are one line of text (tag names, to-do titles; issue 13.7): no C0 control
 * character and no DEL. Notes and bodies are free text and keep them.
 */
export const noControlChars = (s: string): boolean => !/[\u0000-\u001f\u007f]/.test(s);
export const NO_CONTROL_CHARS = 'must not contain control characters';

/** Spec §2 rule 4 (containers, filters): a string of at most 64 characters. */
export const Symbol = z.string().max(LIMITS.symbol);

/**
 * Issue 28 item 11: a date-only field says so in the OpenAPI document (`format: date`) and carries
 * a real example, so /docs "Try it out" pre-fills a date the server takes (without them, Swagger UI
 * made one up from the pattern: `0679-14-03`). The one example every date field shows.
 */
export const DATE_EXAMPLE = '2026-12-01';
const dateMeta = { format: 'date', examples: [DATE_EXAMPLE] };

/** Spec §2 rule 2: YYYY-MM-DD and a real calendar date. */
export const DateOnly = z
  .string()
  .max(10)
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine(isCalendarDate, 'is not a calendar date')
  .meta(dateMeta);

/** A date-only field in an answer (whenDate, deadline, a view's day): YYYY-MM-DD, documented as DateOnly is. */
export const DateOut = z.string().meta(dateMeta);

export const Timestamp = z.string().meta({ description: 'RFC 3339 UTC with milliseconds', format: 'date-time' });

/**
 * Issue 13.8 (docs/api.md "Wire conventions"): an id in a path (`{id}`, `{noteId}`, `{headingId}`)
 * has the shape every id has, an UPPERCASE UUID. Anything else (a lowercase UUID from
 * crypto.randomUUID(), a typo) is 422 at its pointer naming the rule, as create answers, rather
 * than a bare 404 that reads like "deleted".
 */
export const PathId = z
  .string()
  .max(LIMITS.idMax)
  .regex(UUID_UPPER, 'ids are UPPERCASE UUIDs (8-4-4-4-12 hex digits, A-F); this one is not');

/** Path parameter `{id}`. */
export const IdParam = { id: PathId };

/** Body-less actions still refuse unknown properties. */
export const EmptyBody = z.object({}).strict();

/**
 * An absolute http(s) URL check for zod's superRefine (link titles, url attachments): the WHATWG
 * parser must read it; `noUserinfo` also refuses a user name or password in it.
 */
export function checkHttpUrl(value: string, ctx: z.RefinementCtx, opts: { noUserinfo?: boolean } = {}): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must be an http or https URL' });
  else if (opts.noUserinfo && (url.username || url.password)) ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
}
