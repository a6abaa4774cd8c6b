/**
 * The console's Content Security Policy, the same in both shells (Electron security checklist,
 * 7 "Define a Content Security Policy"): nothing unless named, and then only the app's own
 * scripts, styles, connections (the web shell's bridge), fonts, manifest and images (plus data:
 * images); no plugins, no <base> rewriting, no form posts, never framed. The Electron shell sets
 * it on every response (electron/security.ts, electron/app-protocol.ts), the web shell on every
 * answer it serves (web/server.ts).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
