import pino, { type DestinationStream, type Logger } from 'pino';

/** Every place a secret could surface in a log line is censored, whatever logs it. */
export const REDACTED_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'headers.cookie',
  'headers.authorization',
  '*.password',
  '*.api_key',
  '*.id_token',
  '*.secret',
  '*.token',
  'password',
  'api_key',
  'id_token',
  'secret',
  'token',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
