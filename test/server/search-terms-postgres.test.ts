import { describe, expect, it } from 'vitest';
import { RARE_SEPARATOR, SearchTerms, type Query } from '../../server/stores/telemetry/postgres/search-columns.js';

/**
 * Which of a row's strings the request log on PostgreSQL holds as common (numbered, in the row's
 * set) and which as rare (in its own text): the writer's side, against a numbering that behaves
 * as the database's (`INSERT … ON CONFLICT DO NOTHING`, then the ids of what was asked).
 */
function numbering(): { query: Query; common: Map<string, number>; sets: Map<string, number> } {
  const common = new Map<string, number>();
  const sets = new Map<string, number>();
  let next = 1;
  const query: Query = async (text, values) => {
    const [orgs, items] = values as [string[], string[]];
    const table = text.includes('search_sets') ? sets : common;
    const key = (i: number) => `${orgs[i]}\u0000${items[i]}`;
    if (text.startsWith('INSERT')) {
      orgs.forEach((_, i) => table.has(key(i)) || table.set(key(i), next++));
      return { rows: [] };
    }
    return {
      rows: orgs.map((org, i) =>
        table === sets
          ? { org_id: org, terms: items[i], id: table.get(key(i)) }
          : { org_id: org, text: items[i], id: table.get(key(i)) },
      ),
    };
  };
  return { query, common, sets };
}

const meta = (values: Record<string, string>) => JSON.stringify(values);

describe('search terms on PostgreSQL', () => {
  it('numbers a string the second time an organisation has it, in a batch or across batches', async () => {
    const { query, common } = numbering();
    const terms = new SearchTerms();
    const first = await terms.columns(
      ['org-a', 'org-a', 'org-b'],
      ['req_1', 'req_2', 'req_3'],
      [meta({ team: 'red' }), meta({ team: 'red', trace: 'once' }), meta({ team: 'blue' })],
      query,
    );
    // "team" and "red" twice in org-a's rows: common there; org-b's strings are its own.
    expect([...common.keys()].sort()).toEqual(['org-a\u0000red', 'org-a\u0000team']);
    expect(first.rare).toEqual([
      'req_1',
      `req_2${RARE_SEPARATOR}trace${RARE_SEPARATOR}once`,
      `req_3${RARE_SEPARATOR}team${RARE_SEPARATOR}blue`,
    ]);
    expect(first.sets[0]).not.toBeNull();
    expect(first.sets[1]).toBe(first.sets[0]);
    expect(first.sets[2]).toBeNull();

    // Seen once before, by the same organisation: common from its second batch on.
    const second = await terms.columns(
      ['org-b', 'org-a'],
      ['req_4', 'req_5'],
      [meta({ team: 'blue' }), meta({ trace: 'new' })],
      query,
    );
    expect(common.has('org-b\u0000blue')).toBe(true);
    expect(common.has('org-b\u0000team')).toBe(true);
    // "trace" seen once by org-a before, "new" never.
    expect(common.has('org-a\u0000trace')).toBe(true);
    expect(second.rare).toEqual(['req_4', `req_5${RARE_SEPARATOR}new`]);
    expect(second.sets[0]).not.toBeNull();
    expect(second.sets[0]).not.toBe(first.sets[0]);
  });

  it('finds a string numbered by another writer, and gives one string of two rows one number', async () => {
    const { query, common } = numbering();
    const writers = [new SearchTerms(), new SearchTerms()];
    await writers[0]!.columns(['org-a', 'org-a'], ['req_1', 'req_2'], [meta({ k: 'v' }), meta({ k: 'v' })], query);
    const before = common.get('org-a\u0000v');
    // The second writer has seen "v" once and the first numbered it: the same number.
    await writers[1]!.columns(['org-a'], ['req_3'], [meta({ k: 'v' })], query);
    const again = await writers[1]!.columns(['org-a'], ['req_4'], [meta({ k: 'v' })], query);
    expect(common.get('org-a\u0000v')).toBe(before);
    expect(again.rare).toEqual(['req_4']);
  });
});
