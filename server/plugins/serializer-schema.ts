/**
 * An answer's schema as fast-json-stringify serializes it fastest, meaning the same. TypeBox
 * writes "X or null", "a or b or c" and "string or integer" as `anyOf`, which fast-json-stringify
 * serializes by validating the value against each branch with Ajv, on every answer, after
 * compiling a validator for each: ~0.7 s of the ~1.1 s that building every route's serializers
 * took, paid by the first answers after a start. The same constraints written with a list of
 * types (and `enum` for literals) are serialized after a `typeof`:
 *
 * - `anyOf: [X, {type: 'null'}]`, X of one type: `{...X, type: [X's type, 'null']}`. X's other
 *   keywords (`format`, `maxLength`, `properties`, …) constrain only values of its type, so null
 *   passes both forms alike; X's literals (`const`, `enum`) take null among them.
 * - `anyOf` of bare types (`{type: 'string'}`, `{type: 'integer'}`): `{type: [those types]}`.
 * - `anyOf` of literals of one type (and null): `{type, enum: [the literals]}`.
 *
 * A union of objects (its branch is chosen by content) or with other keywords stays as it is.
 * fast-json-stringify applies no `enum` while serializing, as it applies no `pattern` or
 * `maxLength`: our answers are typed where they are made.
 */

type Json = Record<string, unknown>;

/** Keywords that bind a value whatever its type: X holding one cannot simply take null beside it. */
const BINDS_EVERY_TYPE = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'if'];

const isSchema = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isNull = (branch: Json) => branch.type === 'null' && Object.keys(branch).length === 1;
const keysAre = (branch: Json, ...names: string[]) =>
  Object.keys(branch).length === names.length && names.every((name) => name in branch);

/** `schema` with its simple unions written without `anyOf`; a new tree, `schema` untouched. */
export function withSimpleUnions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withSimpleUnions);
  if (!isSchema(schema)) return schema;
  const copy: Json = {};
  for (const [name, value] of Object.entries(schema)) copy[name] = withSimpleUnions(value);
  const { anyOf: branches, ...siblings } = copy;
  if (!Array.isArray(branches) || !branches.every(isSchema)) return copy;
  const simpler = simpleUnion(branches);
  return simpler === null ? copy : { ...simpler, ...siblings };
}

/** The union of `branches` without `anyOf`, or null when it has no such form. */
function simpleUnion(branches: Json[]): Json | null {
  const nullable = branches.some(isNull);
  const others = branches.filter((branch) => !isNull(branch));
  if (others.length === 0) return null;
  if (others.every((branch) => keysAre(branch, 'type'))) {
    // A branch may be a list of types already (a union made simpler below it).
    const types = others.flatMap((branch) => branch.type);
    if (!types.every((type) => typeof type === 'string')) return null;
    return { type: [...new Set([...types, ...(nullable ? ['null'] : [])])] };
  }
  const types = others.map((branch) => branch.type);
  if (!types.every((type) => typeof type === 'string' && type !== 'null')) return null;
  const withNull = (type: unknown) => (nullable ? [type, 'null'] : type);
  if (others.length > 1) {
    if (!others.every((branch) => keysAre(branch, 'type', 'const')) || new Set(types).size > 1) return null;
    return { type: withNull(types[0]), enum: [...others.map((branch) => branch.const), ...(nullable ? [null] : [])] };
  }
  const [only] = others as [Json];
  if (!nullable || BINDS_EVERY_TYPE.some((keyword) => keyword in only)) return null;
  const { const: literal, enum: literals, ...rest } = only;
  const allowed = 'const' in only ? [literal] : Array.isArray(literals) ? literals : null;
  return { ...rest, type: withNull(only.type), ...(allowed ? { enum: [...allowed, null] } : {}) };
}
