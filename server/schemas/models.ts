import { Type, type Static } from '@sinclair/typebox';

export const ModelList = Type.Object({
  models: Type.Array(Type.Object({ id: Type.String(), provider: Type.String(), active: Type.Boolean() })),
});
export type ModelList = Static<typeof ModelList>;
