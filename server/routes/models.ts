import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../schemas/common.js';
import { ModelList } from '../schemas/models.js';

/** The route catalogue: an extension beyond the specification, so clients can offer choices. */
export async function modelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/models', { schema: { tags: ['models'], response: { 200: ModelList, ...errors(401) } } }, async () => ({
    models: app.control.models.list(),
  }));
}
