import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import fastJsonStringify from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { compileAhead } from '../../server/plugins/validation.js';
import { withSimpleUnions } from '../../server/plugins/serializer-schema.js';
import { Nullable } from '../../server/schemas/common.js';
import { startServer, type TestServer } from './harness.js';

const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin')]);
const Answer = Type.Object({
  name: Nullable(Type.String({ maxLength: 8 })),
  at: Nullable(Type.String({ format: 'date-time' })),
  count: Nullable(Type.Integer()),
  role: Role,
  previous_role: Nullable(Role),
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  owner: Nullable(Type.Object({ id: Type.String() })),
  value: Nullable(Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  outcome: Type.Union([
    Type.Object({ kind: Type.Literal('spent'), micro: Type.Integer() }),
    Type.Object({ kind: Type.Literal('left'), days: Type.Integer() }),
  ]),
});

describe("answers' schemas for the serializer", () => {
  it('write nullable values, literals and bare types as lists of types, and leave unions of objects', () => {
    const simpler = withSimpleUnions(Answer) as { properties: Record<string, unknown> };
    expect(simpler.properties).toMatchObject({
      name: { type: ['string', 'null'], maxLength: 8 },
      at: { type: ['string', 'null'], format: 'date-time' },
      count: { type: ['integer', 'null'] },
      role: { type: 'string', enum: ['owner', 'admin'] },
      previous_role: { type: ['string', 'null'], enum: ['owner', 'admin', null] },
      loc: { type: 'array', items: { type: ['string', 'integer'] } },
      owner: { type: ['object', 'null'], properties: { id: { type: 'string' } } },
      value: { type: ['string', 'number', 'boolean', 'null'] },
    });
    // A union of objects is chosen by content: it stays a union.
    expect(simpler.properties.outcome).toHaveProperty('anyOf');
    expect(simpler.properties).not.toHaveProperty('name.anyOf');
    // The schema the routes and the console's host read is left as it was.
    expect(Answer.properties.name).toHaveProperty('anyOf');
  });

  it('serialize every answer as the union did, and still refuse a value of no type it allows', () => {
    const before = fastJsonStringify(Answer);
    const after = fastJsonStringify(withSimpleUnions(Answer) as typeof Answer);
    const answers = [
      {
        name: 'a',
        at: '2026-12-04T10:00:00.000Z',
        count: 3,
        role: 'owner',
        previous_role: null,
        loc: ['body', 2],
        owner: { id: 'k1' },
        value: true,
        outcome: { kind: 'spent', micro: 5 },
      },
      {
        name: null,
        at: null,
        count: null,
        role: 'admin',
        previous_role: 'owner',
        loc: [],
        owner: null,
        value: null,
        outcome: { kind: 'left', days: 2 },
      },
      {
        name: 'b',
        at: null,
        count: 0,
        role: 'admin',
        previous_role: 'admin',
        loc: [0],
        owner: null,
        value: 1.5,
        outcome: { kind: 'left', days: 0 },
      },
    ] as const;
    for (const answer of answers) {
      expect(after(answer)).toBe(before(answer));
      expect(JSON.parse(after(answer))).toEqual(answer);
    }
    const wrong = { ...answers[0], count: 'three' };
    expect(() => before(wrong as never)).toThrow();
    expect(() => after(wrong as never)).toThrow(TypeError);
  });
});

describe('compiling ahead', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("compiles every route's schemas once, stops when told, and leaves the answers as they were", async () => {
    const before = await fetch(`${server.baseUrl}/auth/me`);
    const compiling = vi.spyOn(Ajv.prototype, 'compile');
    expect(await compileAhead(server.app, () => true)).toBe(0);
    expect(compiling).not.toHaveBeenCalled();
    const compiled = await compileAhead(server.app, () => false);
    // Every route's body, query and answers: hundreds, whatever is added later.
    expect(compiled).toBeGreaterThan(100);
    expect(compiling).toHaveBeenCalled();
    expect(await compileAhead(server.app, () => false)).toBe(0);
    // From here on no request compiles anything: sign-in's body validator among them.
    compiling.mockClear();
    const after = await fetch(`${server.baseUrl}/auth/me`);
    expect(after.status).toBe(before.status);
    expect(await after.json()).toEqual(await before.json());
    const login = await fetch(`${server.baseUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'nobody@example.com', password: 42 }),
    });
    // A body of the wrong type is refused by the compiled validator, in the contract's shape.
    expect(login.status).toBe(422);
    expect(compiling).not.toHaveBeenCalled();
    compiling.mockRestore();
  });
});
