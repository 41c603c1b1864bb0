// The Content-Security-Policy of the pages the server renders for people (the OAuth authorize
// page, the web app): scripts and styles from this origin only (no inline script or style, no
// third-party origin), images from this origin, calls to this origin only, no framing; the web
// app's manifest and service worker from this origin (docs/app.md "Installable and offline":
// without `manifest-src` the manifest would fall back to `default-src 'none'`; `worker-src` would
// fall back to `script-src 'self'` in CSP3 browsers, and is said outright). One string for both
// doors (rest/oauth-pages.ts, app/serve.ts), which may not import each other.
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
