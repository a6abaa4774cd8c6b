import { describe, expect, it } from 'vitest';
import { describeJoinPolicy, emailDomain, mayJoin, parseJoinPolicy } from '../../server/domain/join-policy.js';

describe('the domain of an email', () => {
  it('is what follows the last @, in lower case, so a quoted local part cannot pose as the domain', () => {
    expect(emailDomain('Ada@Allowed.Example')).toBe('allowed.example');
    expect(emailDomain('"ada@allowed.example"@evil.example')).toBe('evil.example');
  });
});

describe('who may join', () => {
  const domains = { policy: 'domains' as const, domains: ['allowed.example'] };

  it('anyone while open, nobody while closed', () => {
    expect(mayJoin({ policy: 'open', domains: [] }, 'x@anywhere.example')).toBe(true);
    expect(mayJoin({ policy: 'closed', domains: [] }, 'x@anywhere.example')).toBe(false);
  });

  it('with domains, an email at exactly one of them, in any case, and not at a subdomain', () => {
    expect(mayJoin(domains, 'x@ALLOWED.example')).toBe(true);
    expect(mayJoin(domains, 'x@mail.allowed.example')).toBe(false);
    expect(mayJoin(domains, 'x@notallowed.example')).toBe(false);
    expect(mayJoin(domains, '"x@allowed.example"@evil.example')).toBe(false);
  });

  it('reads as one line', () => {
    expect(describeJoinPolicy({ policy: 'domains', domains: ['a.example', 'b.example'] })).toBe(
      'domains: a.example, b.example',
    );
    expect(describeJoinPolicy({ policy: 'closed', domains: [] })).toBe('closed');
  });
});

describe("the operator's flags", () => {
  it('give a policy, its domains normalised', () => {
    expect(parseJoinPolicy('open', undefined)).toEqual({ ok: true, policy: { policy: 'open', domains: [] } });
    expect(parseJoinPolicy('domains', 'B.example,a.example,b.EXAMPLE')).toEqual({
      ok: true,
      policy: { policy: 'domains', domains: ['a.example', 'b.example'] },
    });
  });

  it('refuse domains with another policy, and a domains policy without any', () => {
    expect(parseJoinPolicy('closed', 'a.example')).toMatchObject({ ok: false });
    expect(parseJoinPolicy('domains', undefined)).toMatchObject({ ok: false });
    expect(parseJoinPolicy('domains', '   ')).toMatchObject({ ok: false });
  });
});
