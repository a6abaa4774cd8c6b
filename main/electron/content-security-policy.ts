/**
 * The console's Content Security Policy (Electron security checklist, 7 "Define a Content
 * Security Policy"): only the app's own scripts, styles, connections and images (plus data:
 * images); no plugins, no <base> rewriting, never framed. Applied to every response, see
 * security.ts and app-protocol.ts.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "base-uri 'none'",
].join('; ');
