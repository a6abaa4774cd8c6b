import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { endpoints, type EndpointInput, type EndpointName, type EndpointOutput } from './endpoints.js';
import { ConsoleError, errorFromResponse } from './errors.js';
import './formats.js';
import type { HttpSession } from './http-session.js';

const checks = new Map<TSchema, TypeCheck<TSchema>>();
function checkerOf(schema: TSchema): TypeCheck<TSchema> {
  let check = checks.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    checks.set(schema, check);
  }
  return check;
}

/**
 * Typed calls to the control plane. Every answer is checked against the server's
 * schema: a remote server that answers another shape gives a clear error naming the
 * field, never a crash further in.
 */
export class ControlPlaneClient {
  constructor(readonly session: HttpSession) {}

  async call<N extends EndpointName>(name: N, input: EndpointInput<N>): Promise<EndpointOutput<N>> {
    const endpoint = endpoints[name];
    const parts = input as { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
    const path = endpoint.path.replace(/\{(\w+)\}/g, (_, key: string) => encodeURIComponent(parts.params?.[key] ?? ''));
    const answer = await this.session.send(endpoint.method, path, {
      query: parts.query,
      body: parts.body,
      anonymous: 'anonymous' in endpoint && endpoint.anonymous,
    });
    if (answer.status >= 400) throw errorFromResponse(answer.status, answer.body, answer.hints);
    const check = checkerOf(endpoint.response);
    if (!check.Check(answer.body)) {
      const first = check.Errors(answer.body).First();
      const field = first?.path || '(the whole body)';
      throw new ConsoleError(
        502,
        `unexpected answer from ${endpoint.method} ${endpoint.path}: ${field} ${first?.message ?? 'does not match'}`,
      );
    }
    return answer.body as EndpointOutput<N>;
  }
}
