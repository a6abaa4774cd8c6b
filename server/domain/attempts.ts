import type { Attempt } from '../schemas/request-log.js';
import { PROVIDER_ID, UPSTREAM_MODEL } from './routes-validation.js';

/**
 * A request's upstream attempts and the target that served it, as the request log keeps them
 * (columns `attempts` and `served_by`) and as the API reads them back.
 */

/** `served_by`: the target that served, as the routes document names it. */
export const servedBy = (provider: string, model: string): string => `${provider}/${model}`;

/**
 * Whether `text` can name a target as `served_by` does: a provider id, `/`, then an upstream
 * model id, which may hold `/` of its own (`openrouter/openai/gpt-4o-mini`). The analytics'
 * `target` filter refuses anything else rather than match no row in silence.
 */
export function isTarget(text: string): boolean {
  const slash = text.indexOf('/');
  return slash > 0 && PROVIDER_ID.test(text.slice(0, slash)) && UPSTREAM_MODEL.test(text.slice(slash + 1));
}

/**
 * The provider of a `served_by`: its text up to the first `/` (a provider id holds none; a model
 * may, as in `meta-llama/Llama-3.1-8B`). The whole text when it holds no `/`.
 */
export function servedProvider(servedBy: string): string {
  const slash = servedBy.indexOf('/');
  return slash < 0 ? servedBy : servedBy.slice(0, slash);
}

/**
 * `attempts` as stored: JSON text of each attempt's own five fields, in order. Anything else an
 * import line or a wire row carried beside them is left out, not kept unread in the log.
 */
export function attemptsText(attempts: readonly Attempt[]): string {
  return JSON.stringify(
    attempts.map((attempt) => ({
      target: attempt.target,
      status: attempt.status,
      error: attempt.error,
      ms: attempt.ms,
      decision: attempt.decision,
    })),
  );
}

/** The stored text read back; null stays null (unknown). */
export const storedAttempts = (text: string | null): Attempt[] | null =>
  text === null ? null : (JSON.parse(text) as Attempt[]);
