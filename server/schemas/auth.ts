import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.js';

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);

const Email = Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' });
const Password = Type.String({ minLength: 8, maxLength: 256 });

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  organization_name: Type.String(),
});
export type RegisterBody = Static<typeof RegisterBody>;

export const LoginBody = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 256 }),
});
export type LoginBody = Static<typeof LoginBody>;

export const GoogleBody = Type.Object({
  id_token: Type.String({ minLength: 1, maxLength: 16384 }),
  organization_name: Type.Optional(Type.String()),
});
export type GoogleBody = Static<typeof GoogleBody>;

export const Member = Type.Object({
  user_id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  role: Role,
  joined_at: Timestamp,
});
export type Member = Static<typeof Member>;

export const SignedIn = Type.Object({
  user: Member,
  organization: Type.Object({ name: Type.String() }),
});
export type SignedIn = Static<typeof SignedIn>;

export const Me = Type.Composite([Member, Type.Object({ organization: Type.Object({ name: Type.String() }) })]);
export type Me = Static<typeof Me>;
