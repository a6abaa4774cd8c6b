import { isTarget } from '../domain/attempts.js';
import { badRequest } from '../http-errors.js';

/**
 * The analytics' and health's `target` query parameter (schemas/common.ts, `TargetFilter`): the
 * `served_by` its rows must hold, or undefined when absent. Checked here rather than by the
 * schema so that a malformed one answers 400 `{"error"}` with `x-error-field: target`, as the
 * routes' other refusals of a query value do.
 */
export function targetOf(target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  if (!isTarget(target)) {
    throw badRequest('target must be provider/model: a provider id, /, and a model id of at most 256 characters', {
      field: 'target',
    });
  }
  return target;
}
