/**
 * The names the embedded server and the console's host share, apart from the schemas in
 * embedded.ts: this module loads nothing, so that the host spawns its server before it loads
 * typebox (a few hundred milliseconds a first launch would otherwise wait twice).
 */

/** The flag that asks `serve` to announce itself to its parent process. */
export const ANNOUNCE_FLAG = '--announce';

/**
 * The API's base as the host names it over the socket: the URL its requests carry (so their
 * Host header is `localhost`, which the server's loopback guard accepts) and the origin its
 * cookie jar files the session under. No TCP port is behind it: the host reaches the server
 * only through the socket it was announced with.
 */
export const EMBEDDED_ADDRESS = 'http://localhost/api';
