// The authorize page (spec §5.2 rule 4, DECISIONS §7): server-rendered HTML and CSS, no
// third-party asset, no inline script, no password form. It shows the callback address the app
// sent, the app name as an unverified subtitle, the scopes in plain words and the nine-digit code
// with the warning never to pass it on, then waits (polling POST /oauth/authorize/wait from
// /oauth/static/authorize.js) and redirects. Whoever opens this page learns the code its approval
// releases, so the callback protects nothing (docs/oauth.md "Approval phishing"); the approving
// screens, not this one, show where a request started. Also the favicon every page asks for.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Scope } from '../core/scopes.js';
import { rootDir } from './console/bundle.js';
import { formatUserCode } from '../routers/oauth/model.js';
import type { ClientMetadata } from '../routers/oauth/client-metadata.js';
import { PAGE_CSP } from '../core/page-csp.js';

/** Stricter than rest/html.ts HTML_CSP: no inline style either. */
export const OAUTH_CSP = PAGE_CSP;

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const AREA_WORDS: Record<string, string> = {
  todos: 'your to-dos',
  containers: 'your areas, projects and headings',
  notes: 'your notes, note folders and note versions',
  inbox: 'your inbox',
  tags: 'your tags',
  attachments: 'your attachments and their files',
  filters: 'your saved filters',
  settings: 'your settings',
  sessions: 'your sessions, personal tokens and connected apps',
  webhooks: 'your webhooks',
  tasks: 'all your content (to-dos, projects, notes, inbox, tags, attachments, filters, settings)',
};

/** A scope in plain words ("Read and change your to-dos"). */
export function scopeWords(scope: Scope | string): string {
  const [area, level] = scope.split(':');
  const what = AREA_WORDS[area ?? ''] ?? scope;
  if (area === 'webhooks') return 'Create, see and change your webhooks';
  return `${level === 'write' ? 'Read and change' : 'Read'} ${what}`;
}

function layout(title: string, body: string, script = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Cairn</title>
<link rel="stylesheet" href="/oauth/static/style.css">
${script ? '<script src="/oauth/static/authorize.js" defer></script>' : ''}
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/**
 * `document`: for a client identified by its metadata document (routers/oauth/client-metadata.ts),
 * the app is named by the document URL's host (what the approval screens show), and the
 * `client_name` the document gives is shown as unverified.
 */
export function authorizePage(opts: { redirectUri: string; clientName: string; document?: ClientMetadata | null; scopes: Scope[]; userCode: string; waitHandle: string; consoleUrl: string }): string {
  const scopes = opts.scopes.map((s) => `<li><span class="words">${esc(scopeWords(s))}</span> <code>${esc(s)}</code></li>`).join('\n');
  const code = formatUserCode(opts.userCode);
  const d = opts.document;
  const subtitle = d
    ? `App identified by its metadata document at <strong id="client-host">${esc(d.host)}</strong>${d.clientName ? `, which names itself <strong>${esc(d.clientName)}</strong> <span class="badge">unverified</span>` : ''}`
    : `App name given at registration: <strong>${esc(opts.clientName)}</strong> <span class="badge">unverified</span>`;
  return layout(
    'Approve access',
    `<h1>Sign-in request for <span class="callback" id="callback">${esc(opts.redirectUri)}</span></h1>
<p class="subtitle">${subtitle}</p>
<p>If you approve, the app will be able to:</p>
<ul class="scopes">
${scopes}
</ul>
<section class="code-box">
<p>To approve, open Cairn on a device where you are already signed in (the console at <a href="${esc(opts.consoleUrl)}" target="_blank" rel="noopener noreferrer" id="console-link">${esc(opts.consoleUrl)}</a>, which opens in a new tab: keep this page open; or <code>npm run cli -- approve ${esc(opts.userCode)}</code>) and enter this code:</p>
<p class="code" id="user-code">${esc(code)}</p>
<p class="status" id="status" data-wait="${esc(opts.waitHandle)}">Waiting for your decision… This page continues by itself.</p>
</section>
<p class="warning" id="warning">Enter this code yourself. Never read it out, send it to anyone, or approve a code someone else gave you: whoever opened this page gets the access once the code is approved.</p>
<p class="fine">Cairn never asks for your password on this page. If you did not start this, close the page; nothing happens unless the code is approved.</p>`,
    true,
  );
}

/**
 * `back`: for an authorization error the app may hear about, a link (never a redirect) to its
 * callback with the error, named by the callback's address (issue 28 item 3).
 */
export function errorPageHtml(title: string, detail: string, back?: { href: string; callback: string }): string {
  const link = back ? `\n<p>To tell the app, go back to it yourself: <a href="${esc(back.href)}" rel="noopener noreferrer" id="back-link">${esc(back.callback)}</a></p>` : '';
  return layout(
    title,
    `<h1>${esc(title)}</h1>\n<p>${esc(detail)}</p>${link}\n<p class="fine">The app sent an authorization request Cairn cannot answer safely, so you are not sent back to it automatically.</p>`,
  );
}

export const OAUTH_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
body { margin: 0; background: Canvas; color: CanvasText; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
h1 { font-size: 1.3rem; word-break: break-all; }
.callback { font-family: ui-monospace, monospace; }
.subtitle { margin-top: -0.5rem; color: GrayText; }
.badge { border: 1px solid GrayText; border-radius: 0.3rem; padding: 0 0.3rem; font-size: 0.8rem; }
.scopes code, .fine code { font-size: 0.8rem; color: GrayText; }
.code-box { border: 2px solid CanvasText; border-radius: 0.5rem; padding: 1rem; margin: 1.5rem 0; }
.code { font-size: 2.2rem; letter-spacing: 0.2rem; font-family: ui-monospace, monospace; text-align: center; margin: 0.5rem 0; }
.status { text-align: center; }
.fine { font-size: 0.85rem; color: GrayText; }
form { margin: 1rem 0; }
label { display: block; margin: 0.3rem 0; }
input[type=text], input[type=email], input[type=password], select { font: inherit; padding: 0.3rem; width: 100%; box-sizing: border-box; }
button { font: inherit; padding: 0.3rem 0.8rem; margin: 0.2rem 0.2rem 0.2rem 0; }
table { border-collapse: collapse; width: 100%; }
td, th { border-bottom: 1px solid GrayText; padding: 0.3rem; text-align: left; vertical-align: top; }
.secret { font-family: ui-monospace, monospace; word-break: break-all; border: 1px dashed CanvasText; padding: 0.5rem; }
.error { color: #c00; }
.warning { border-left: 4px solid #c60; padding: 0.3rem 0.6rem; font-weight: 600; }
[hidden] { display: none !important; }
`;

/**
 * The authorize page's script (console/authorize.js: polls the wait endpoint, then follows the
 * redirect), served from self (no inline script). Browser code lives in console/, not server/.
 */
export const AUTHORIZE_JS = readFileSync(path.join(rootDir(), 'console', 'authorize.js'), 'utf8');

/**
 * /favicon.ico (issue 28 item 14): browsers ask every page for it. A 16×16 icon (three stacked
 * stones) drawn here as a 32-bit BMP inside an ICO, so no binary file and no build step; served
 * from self, which every page's CSP allows (img-src 'self').
 */
export const FAVICON_ICO: Buffer = (() => {
  const n = 16;
  const stones = [
    { cx: 7.5, cy: 12.5, rx: 6.5, ry: 2.6 },
    { cx: 7.5, cy: 8.2, rx: 4.6, ry: 2.1 },
    { cx: 7.8, cy: 4.4, rx: 2.9, ry: 1.7 },
  ];
  const pixels = Buffer.alloc(n * n * 4);
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const inside = stones.some((s) => ((x - s.cx) / s.rx) ** 2 + ((y - s.cy) / s.ry) ** 2 <= 1);
      if (!inside) continue;
      // BMP rows run bottom-up; BGRA.
      const o = ((n - 1 - y) * n + x) * 4;
      pixels.set([0x73, 0x6b, 0x5b, 0xff], o);
    }
  }
  const mask = Buffer.alloc((n * n) / 8); // the AND mask: all zero (alpha says what shows)
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0);
  info.writeInt32LE(n, 4);
  info.writeInt32LE(n * 2, 8); // colour and mask stacked
  info.writeUInt16LE(1, 12);
  info.writeUInt16LE(32, 14);
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2); // an icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(n, 6);
  dir.writeUInt8(n, 7);
  dir.writeUInt16LE(1, 10);
  dir.writeUInt16LE(32, 12);
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
})();
