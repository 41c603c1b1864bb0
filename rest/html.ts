// Issue 11.8: the headers every HTML page sends (/docs, /errors, later /oauth and /app). One
// middleware, mounted in front of each HTML route, so a new page cannot forget one.
import type { NextFunction, Request, Response } from 'express';

/**
 * Same-origin only. Swagger UI (/docs) loads its scripts, stylesheet and images from its own
 * mount, writes inline <style> blocks and style attributes, uses data: images, and "Try it out"
 * calls the API on this origin; nothing else is allowed, no third-party origin, no inline script.
 */
export const HTML_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** nosniff, the CSP above (with frame-ancestors 'none') and X-Frame-Options for older browsers. */
export function htmlPageHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Security-Policy', HTML_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}
