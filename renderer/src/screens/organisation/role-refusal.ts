import { BridgeError, errorMessage } from '../../bridge.js';

/**
 * A change the server refused, in words; a 403 says why it may have come: the role in this
 * session is the one read at sign-in, and the operator may have changed it since.
 */
export function refusal(error: unknown): string {
  const message = errorMessage(error);
  if (error instanceof BridgeError && error.status === 403) {
    return `${message}. Your role may have changed since you signed in: sign out and in again to see it.`;
  }
  return message;
}
