import { describe, expect, it } from 'vitest';
import { CSV_BOM, csvLine, escapeCell, flatten, parseCsv, toCsv } from '../../../renderer/src/lib/csv.js';

describe('CSV cells', () => {
  it('quotes only cells that hold a comma, a quote or a line break, doubling quotes', () => {
    expect(escapeCell('plain')).toBe('plain');
    expect(escapeCell('a,b')).toBe('"a,b"');
    expect(escapeCell('say "hi"')).toBe('"say ""hi"""');
    expect(escapeCell('two\nlines')).toBe('"two\nlines"');
    expect(escapeCell('cr\r\nlf')).toBe('"cr\r\nlf"');
    expect(escapeCell('')).toBe('');
  });

  it('writes null and undefined as empty cells, booleans and numbers as they read, objects as JSON', () => {
    expect(escapeCell(null)).toBe('');
    expect(escapeCell(undefined)).toBe('');
    expect(escapeCell(true)).toBe('true');
    expect(escapeCell(0)).toBe('0');
    expect(escapeCell(0.000001)).toBe('0.000001');
    expect(escapeCell({ a: 'b,c' })).toBe('"{""a"":""b,c""}"');
  });

  it('keeps text a spreadsheet would run as a formula as text', () => {
    expect(escapeCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(escapeCell('+1')).toBe("'+1");
    expect(escapeCell('-2+3')).toBe("'-2+3");
    expect(escapeCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(escapeCell('\t=1')).toBe("'\t=1");
    expect(escapeCell('\r=1')).toBe(`"'\r=1"`);
    // Only at the start, and never a number: a negative figure stays a number.
    expect(escapeCell('a=b')).toBe('a=b');
    expect(escapeCell(-5)).toBe('-5');
  });

  it('keeps unicode as it is', () => {
    expect(escapeCell('کراچی')).toBe('کراچی');
    expect(escapeCell('emoji 🚀, café')).toBe('"emoji 🚀, café"');
    expect(csvLine(['ü', 'ñ'])).toBe('ü,ñ\r\n');
  });
});

describe('flattening', () => {
  const row = {
    req_id: 'req_1',
    key: { id: 'k1', name: null },
    project: null,
    metrics: { total_ms: 12.5, ttft_ms: null, deep: { more: 1 } },
    tags: ['a', 'b'],
    metadata: { customer: 'acme', 'odd,key': 'x"y' },
  };

  it('turns nested objects into dotted columns, keeping the named paths whole as JSON text', () => {
    expect(flatten(row, ['metadata'])).toEqual({
      req_id: 'req_1',
      'key.id': 'k1',
      'key.name': null,
      project: null,
      'metrics.total_ms': 12.5,
      'metrics.ttft_ms': null,
      'metrics.deep.more': 1,
      tags: ['a', 'b'],
      metadata: '{"customer":"acme","odd,key":"x\\"y"}',
    });
  });

  it('writes every line with the header’s cells, empty where a record has no such column', () => {
    const columns = ['req_id', 'project.id', 'key.name', 'metrics.ttft_ms', 'tags', 'metadata'];
    const text = toCsv(columns, [flatten(row, ['metadata'])]);
    expect(text).toBe(
      'req_id,project.id,key.name,metrics.ttft_ms,tags,metadata\r\n' +
        'req_1,,,,"[""a"",""b""]","{""customer"":""acme"",""odd,key"":""x\\""y""}"\r\n',
    );
    const [header, line] = parseCsv(text);
    expect(header).toEqual(columns);
    expect(line).toHaveLength(columns.length);
    expect(JSON.parse(line![5]!)).toEqual(row.metadata);
  });
});

describe('reading back', () => {
  it('round-trips awkward cells through write and parse', () => {
    const cells = ['a,b', 'q"uote', 'multi\nline\r\nend', '', 'کراچی 🚀', 'plain'];
    const text = CSV_BOM + csvLine(cells) + csvLine(['x', 'y', 'z', '', '', '']);
    expect(parseCsv(text)).toEqual([cells, ['x', 'y', 'z', '', '', '']]);
  });

  it('reads a formula-guarded cell back with its apostrophe', () => {
    expect(parseCsv(csvLine(['=1+1', '@x']))).toEqual([["'=1+1", "'@x"]]);
  });
});
