import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, type ValidationIssue } from '../http-errors.js';
import { ERROR_FIELD_HEADER } from '../schemas/common.js';

const LOCATION: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface AjvIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function toIssue(context: string, issue: AjvIssue): ValidationIssue {
  const loc: (string | number)[] = [LOCATION[context] ?? context];
  for (const part of issue.instancePath.split('/').slice(1)) loc.push(/^\d+$/.test(part) ? Number(part) : part);
  if (issue.keyword === 'required') {
    const field = String(issue.params.missingProperty);
    return { loc: [...loc, field], msg: 'field required', type: 'missing' };
  }
  return { loc, msg: issue.message ?? 'invalid value', type: issue.keyword };
}

/**
 * Every error leaves in the contract's shape: `{"detail": [...]}` with 422 for schema
 * validation, `{"error": ...}` otherwise, and a bare "internal error" for anything
 * unexpected, whose cause goes to the log only. A refusal that concerns one request field
 * names it in the `x-error-field` header (see http-errors.ts); the body never changes.
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.field !== undefined) reply.header(ERROR_FIELD_HEADER, error.field);
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.statusCode).send(error.body);
    }
    if (error.validation) {
      const context = error.validationContext ?? 'body';
      return reply.code(422).send({ detail: error.validation.map((issue) => toIssue(context, issue as AjvIssue)) });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
      return reply.code(422).send({ detail: [{ loc: ['body'], msg: 'body is not valid JSON', type: 'json_invalid' }] });
    }
    if (error.statusCode === 415) {
      return reply.code(415).send({ error: 'request body must be application/json' });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message });
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ error: 'internal error' });
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not found' }));
});
