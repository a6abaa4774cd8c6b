import { Type, type Static } from '@sinclair/typebox';

export const ModelList = Type.Object({
  models: Type.Array(Type.Object({ id: Type.String(), provider: Type.String(), active: Type.Boolean() })),
});
export type ModelList = Static<typeof ModelList>;

/** PKR per million tokens, which is also micro-PKR per token. */
const PerMillion = Type.Number({ minimum: 0 });

/**
 * GET /models/prices, beyond the contract: what each route of the routes document's newest
 * version costs, so that the console can split a request's cost into its prompt, cache and
 * generated parts. Every route has a price (a document with an unpriced route is refused).
 */
export const ModelPrices = Type.Object({
  prices: Type.Array(
    Type.Object({
      model: Type.String(),
      input: PerMillion,
      output: PerMillion,
      cache_write: PerMillion,
      cache_read: PerMillion,
    }),
  ),
  /** On a request served on the organisation's own provider key, the share of the cost the service settles. */
  byok_service_share: Type.Number({ minimum: 0, maximum: 1 }),
});
export type ModelPrices = Static<typeof ModelPrices>;
