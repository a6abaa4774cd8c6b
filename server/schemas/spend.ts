import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp } from './common.js';

/**
 * `GET /analytics/spend`, beyond the contract: the organisation's deposits, the limits given
 * to keys and what is spent, each key's spend against its limit, the recent rate of spend and
 * when each runs out at it (server/domain/forecast.ts says how). Amounts are whole micro-PKR.
 */

export const SPEND_SORTS = ['runs_out', 'burn', 'spent', 'name'] as const;

export const SpendQuery = Type.Object({
  ...Paging,
  sort: Type.Optional(
    Type.Union(
      SPEND_SORTS.map((sort) => Type.Literal(sort)),
      {
        description:
          'runs_out (default): used up first, then the soonest date, then the largest projection; burn: most spent ' +
          'in the window; spent: most settled spend; name',
      },
    ),
  ),
});
export type SpendQuery = Static<typeof SpendQuery>;

const Micro = (description: string) => Type.Integer({ description: `${description}, in micro-PKR` });
const Rate = (description: string) => Type.Number({ minimum: 0, description: `${description}, micro-PKR a day` });

export const Burn = Type.Object(
  {
    daily_micro: Type.Array(Type.Integer(), { description: 'Spend of each day of the window, oldest first' }),
    window_micro: Micro("The window's spend"),
    rate_micro_per_day: Rate('Mean spend a day over the window'),
    rate_low_micro_per_day: Rate("Low end of the mean's 90 % interval"),
    rate_high_micro_per_day: Rate("High end of the mean's 90 % interval"),
  },
  { description: 'Null while the request telemetry cannot be read' },
);

export const Forecast = Type.Union([
  Type.Object({ kind: Type.Literal('spent'), remaining_micro: Micro('What remains (nil or less)') }),
  Type.Object({ kind: Type.Literal('idle'), remaining_micro: Micro('What remains; nothing spent in the window') }),
  Type.Object({
    kind: Type.Literal('runs_out'),
    remaining_micro: Micro('What remains'),
    at: Timestamp,
    earliest: Timestamp,
    latest: Nullable(Timestamp),
  }),
  Type.Object({
    kind: Type.Literal('beyond'),
    remaining_micro: Micro('What remains; at the rate it lasts past `days`'),
    days: Type.Integer(),
  }),
  Type.Object({
    kind: Type.Literal('projected'),
    days: Type.Integer(),
    amount_micro: Micro('Spend of the next `days` at the rate'),
    low_micro: Micro("The same at the low end of the rate's interval"),
    high_micro: Micro("The same at the high end of the rate's interval"),
  }),
]);
export type Forecast = Static<typeof Forecast>;

export const SpendKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key_prefix: Type.String(),
  project_id: Type.String(),
  credit_limit_micro: Nullable(Micro('Lifetime limit; null: none')),
  spent_micro: Micro('Settled spend since the key was made'),
  burn: Nullable(Burn),
  forecast: Nullable(Forecast),
});
export type SpendKey = Static<typeof SpendKey>;

export const SpendReport = Type.Object({
  as_of: Timestamp,
  window: Type.Object({ days: Type.Integer(), from: Timestamp, to: Timestamp }),
  organization: Type.Object({
    deposited_micro: Micro('Sum of the deposits: the budget'),
    allocated_micro: Micro('Sum of the credit limits of the active keys'),
    headroom_micro: Micro('Deposits less the limits allocated: the most a new limit may take'),
    spent_micro: Micro('Settled spend of every key, revoked ones included'),
    remaining_micro: Micro('Deposits less the spend'),
    burn: Nullable(Burn),
    forecast: Nullable(Forecast),
  }),
  total: Type.Integer({ description: 'Active keys' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  keys: Type.Array(SpendKey),
});
export type SpendReport = Static<typeof SpendReport>;
