import type { Random } from './random.js';

export type TerminationReason = 'success' | 'proxy_guillotine' | 'client_disconnect' | 'upstream_stream_aborted';

/**
 * How a request ended. `failed`: answered with an error before any token, nothing
 * billed. `cut`: a stream that ended early, billed for what was generated, if
 * anything. `ok`: a complete answer.
 */
export type Outcome =
  | { kind: 'ok' }
  | {
      kind: 'failed';
      status: number;
      reason: TerminationReason;
      upstreamError: string | null;
      /** Refused by the gateway itself, so no time was spent upstream. */
      atGateway: boolean;
    }
  | {
      kind: 'cut';
      status: number;
      reason: 'client_disconnect' | 'upstream_stream_aborted';
      upstreamError: string | null;
      beforeFirstToken: boolean;
    };

/** Seconds after which the gateway gives up on an upstream and answers 504. */
export const GUILLOTINE_MS = 120_000;

interface FailureRule {
  share: number;
  status: number;
  atGateway: boolean;
  errors: readonly (string | null)[];
}

/** About 3% of requests, spread the way a busy gateway's errors are. */
const FAILURES: readonly FailureRule[] = [
  { share: 0.006, status: 429, atGateway: true, errors: [null] },
  {
    share: 0.003,
    status: 429,
    atGateway: false,
    errors: ['429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit'],
  },
  {
    share: 0.005,
    status: 400,
    atGateway: false,
    errors: [
      "400 invalid_request_error: This model's maximum context length is 128000 tokens",
      '400 invalid_request_error: messages: roles must alternate between "user" and "assistant"',
      "400 invalid_request_error: Invalid value for 'temperature': expected a number between 0 and 2",
    ],
  },
  {
    share: 0.0015,
    status: 401,
    atGateway: false,
    errors: ['401 authentication_error: invalid x-api-key', '401 Incorrect API key provided'],
  },
  {
    share: 0.002,
    status: 404,
    atGateway: false,
    errors: ['404 not_found_error: The model does not exist or you do not have access to it'],
  },
  { share: 0.001, status: 413, atGateway: true, errors: [null] },
  { share: 0.0025, status: 500, atGateway: false, errors: ['500 api_error: Internal server error'] },
  {
    share: 0.0035,
    status: 502,
    atGateway: false,
    errors: ['502 bad gateway: upstream connection reset by peer', '502 bad gateway: invalid response from upstream'],
  },
  {
    share: 0.003,
    status: 503,
    atGateway: false,
    errors: ['503 overloaded_error: Overloaded', '503 service unavailable: the engine is currently overloaded'],
  },
];
const GUILLOTINE_SHARE = 0.0035;
const INCIDENT_503_SHARE = 0.25;

/** Of streamed requests: the caller hangs up, or the upstream drops the stream. */
const CLIENT_DISCONNECT_SHARE = 0.012;
const STREAM_ABORT_SHARE = 0.006;
/** Of those cut streams, the share that ended before the first token flushed. */
const BEFORE_FIRST_TOKEN_SHARE = 0.3;

const STREAM_ABORT_ERRORS = [
  'upstream closed the stream before message_stop',
  'stream error: connection reset while reading upstream chunks',
  'upstream sent an error event: overloaded_error',
];

export function drawOutcome(random: Random, stream: boolean, incident: boolean): Outcome {
  if (incident && random.chance(INCIDENT_503_SHARE)) {
    return {
      kind: 'failed',
      status: 503,
      reason: 'success',
      upstreamError: '503 overloaded_error: Overloaded',
      atGateway: false,
    };
  }
  let draw = random.next();
  for (const rule of FAILURES) {
    draw -= rule.share;
    if (draw < 0) {
      return {
        kind: 'failed',
        status: rule.status,
        reason: 'success',
        upstreamError: random.pick(rule.errors),
        atGateway: rule.atGateway,
      };
    }
  }
  draw -= GUILLOTINE_SHARE;
  if (draw < 0) {
    return {
      kind: 'failed',
      status: 504,
      reason: 'proxy_guillotine',
      upstreamError: `no response from upstream within ${GUILLOTINE_MS / 1000} s`,
      atGateway: false,
    };
  }
  if (!stream) return { kind: 'ok' };
  const cut = random.next();
  if (cut < CLIENT_DISCONNECT_SHARE) {
    return {
      kind: 'cut',
      status: 200,
      reason: 'client_disconnect',
      upstreamError: null,
      beforeFirstToken: random.chance(BEFORE_FIRST_TOKEN_SHARE),
    };
  }
  if (cut < CLIENT_DISCONNECT_SHARE + STREAM_ABORT_SHARE) {
    // Before the first token nothing has been sent, so the gateway can still answer 502.
    const beforeFirstToken = random.chance(BEFORE_FIRST_TOKEN_SHARE);
    return {
      kind: 'cut',
      status: beforeFirstToken ? 502 : 200,
      reason: 'upstream_stream_aborted',
      upstreamError: random.pick(STREAM_ABORT_ERRORS),
      beforeFirstToken,
    };
  }
  return { kind: 'ok' };
}
