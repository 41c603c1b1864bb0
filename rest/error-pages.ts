// {PUBLIC_URL}/errors/<code>: a short page per problem type (DECISIONS §4).
import { ERROR_TABLE, type ErrorCode } from '../core/errors.js';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Cairn</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}code{background:#eee;padding:0 .2em}</style>
</head><body>${body}</body></html>`;
}

/**
 * ERROR_TABLE's text uses Markdown's `code` spans (it is also the OpenAPI description, where they
 * render); on these pages they become <code>, after escaping, so no literal backtick shows.
 */
const prose = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** What an answer of each type may look like: a detail and the path it answered (made up, typical). */
const EXAMPLES: Partial<Record<ErrorCode, { detail?: string; instance: string; errors?: { pointer: string; message: string }[]; headers?: string }>> = {
  unauthorized: { detail: 'The credential is not valid.', instance: '/v1/tags', headers: 'WWW-Authenticate: Bearer error="invalid_token"' },
  grant_revoked: { detail: 'The user revoked this grant.', instance: '/v1/todos' },
  grant_expired: { detail: 'The grant has expired.', instance: '/v1/todos' },
  forbidden_scope: { detail: 'The credential lacks the scope todos:write.', instance: '/v1/todos' },
  forbidden: { detail: 'Sign-up is turned off on this server.', instance: '/v1/auth/register' },
  not_found: { detail: 'To-do not found.', instance: '/v1/todos/0F4C3E3A-6C1B-4E0B-9C57-2B1D8A9E7F10' },
  method_not_allowed: { detail: 'PUT is not allowed here.', instance: '/v1/tags', headers: 'Allow: GET, POST' },
  duplicate_id: { detail: 'A to-do with this id already exists.', instance: '/v1/todos' },
  conflict: { detail: 'At most 25 personal tokens can be active; revoke one first.', instance: '/v1/keys' },
  payload_too_large: { detail: 'The request body is too large.', instance: '/v1/notes' },
  unsupported_media_type: { detail: 'Request bodies must be application/json.', instance: '/v1/tags' },
  validation_failed: { detail: 'The request is invalid.', instance: '/v1/todos', errors: [{ pointer: '/title', message: 'Too small: expected string to have >=1 characters' }] },
  account_too_large: { detail: 'This account is too large to filter inside one request.', instance: '/v1/todos' },
  rate_limited: { detail: 'Too many requests; retry in 12 seconds.', instance: '/v1/todos', headers: 'Retry-After: 12' },
  // A 500 says nothing about its cause (docs/security.md "Logs"): the request id is the lead.
  internal: { instance: '/v1/todos' },
};

/** An example answer of this problem type, as the client receives it (status line, headers, body). */
function example(publicUrl: string, code: ErrorCode): string {
  const e = ERROR_TABLE[code];
  const x = EXAMPLES[code];
  const body = { type: `${publicUrl}/errors/${code}`, title: e.title, status: e.status, detail: x?.detail, instance: x?.instance, request_id: 'req_01JD8ZK4V6Q3', errors: x?.errors };
  const head = [`HTTP/1.1 ${e.status} ${e.title}`, 'Content-Type: application/problem+json', ...(x?.headers ? [x.headers] : [])].join('\n');
  return `<pre>${esc(head)}\n\n${esc(JSON.stringify(body, null, 2))}</pre>`;
}

export function errorPage(publicUrl: string, code: string): string | null {
  if (!Object.hasOwn(ERROR_TABLE, code)) return null;
  const c = code as ErrorCode;
  const e = ERROR_TABLE[c];
  return page(
    e.title,
    `<h1>${esc(e.title)}</h1><p>Problem type <code>${esc(publicUrl)}/errors/${esc(code)}</code>, HTTP status ${e.status}.</p><p>${prose(e.about)}</p>` +
      `<h2>Example</h2>${example(publicUrl, c)}<p>Every problem is an RFC 9457 object: <code>request_id</code> finds the request in the server log; <code>errors</code>, when present, names each invalid field with a JSON pointer.</p>` +
      `<p><a href="${esc(publicUrl)}/errors">All problem types</a></p>`,
  );
}

export function errorIndex(publicUrl: string): string {
  const rows = Object.entries(ERROR_TABLE)
    .map(([code, e]) => `<li><a href="${esc(publicUrl)}/errors/${code}"><code>${code}</code></a> (${e.status}): ${prose(e.about)}</li>`)
    .join('');
  return page('Problem types', `<h1>Problem types</h1><ul>${rows}</ul>`);
}
