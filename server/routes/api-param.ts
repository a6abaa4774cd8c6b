import { badRequest } from '../http-errors.js';
import { isRequestApi, REQUEST_APIS, type RequestApi } from '../schemas/request-log.js';

/**
 * The request log's, analytics' and health's `api` query parameter (schemas/common.ts,
 * `ApiFilter`): the API of the gateway's its rows must have come in on, or undefined when absent.
 * Checked here rather than by the schema, as `target` is (target-param.ts), so that an API this
 * server does not know answers 400 `{"error"}` with `x-error-field: api` instead of matching no
 * row in silence.
 */
export function apiOf(api: string | undefined): RequestApi | undefined {
  if (api === undefined) return undefined;
  if (!isRequestApi(api)) throw badRequest(`api must be one of ${REQUEST_APIS.join(', ')}`, { field: 'api' });
  return api;
}
