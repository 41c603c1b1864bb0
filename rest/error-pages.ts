// {PUBLIC_URL}/errors/<code>: a short page per problem type (DECISIONS §4).
import { ERROR_TABLE, type ErrorCode } from '../server/errors.js';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Cairn</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}code{background:#eee;padding:0 .2em}</style>
</head><body>${body}</body></html>`;
}

export function errorPage(publicUrl: string, code: string): string | null {
  if (!Object.hasOwn(ERROR_TABLE, code)) return null;
  const e = ERROR_TABLE[code as ErrorCode];
  return page(
    e.title,
    `<h1>${esc(e.title)}</h1><p>Problem type <code>${esc(publicUrl)}/errors/${esc(code)}</code>, HTTP status ${e.status}.</p><p>${esc(e.about)}</p><p><a href="${esc(publicUrl)}/errors">All problem types</a></p>`,
  );
}

export function errorIndex(publicUrl: string): string {
  const rows = Object.entries(ERROR_TABLE)
    .map(([code, e]) => `<li><a href="${esc(publicUrl)}/errors/${code}"><code>${code}</code></a> (${e.status}): ${esc(e.about)}</li>`)
    .join('');
  return page('Problem types', `<h1>Problem types</h1><ul>${rows}</ul>`);
}
