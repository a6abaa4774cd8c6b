import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The theme's colours, read from styles.css as the browser gets them: each custom property a
 * light-dark(light, dark) pair. WCAG 2.x AA: text 4.5:1, control edges, focus rings and chart
 * series 3:1 (1.4.11), against every background they sit on, in both themes.
 */

// From the project's root: under jsdom, import.meta.url is not a file address.
const css = readFileSync(join(process.cwd(), 'renderer/src/styles.css'), 'utf8');
const pairs = new Map<string, readonly [string, string]>(
  [...css.matchAll(/--([\w-]+):\s*light-dark\((#[0-9a-f]{6}),\s*(#[0-9a-f]{6})\)/gi)].map((m) => [
    m[1]!,
    [m[2]!, m[3]!],
  ]),
);

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

const color = (name: string, theme: 0 | 1): string => {
  const pair = pairs.get(name);
  if (!pair) throw new Error(`styles.css has no light-dark() pair for --${name}`);
  return pair[theme];
};

const BACKGROUNDS = ['bg', 'surface', 'surface-2'];

/** The colours the spend screen fills its limit bars with (how much of a limit is spent): graphics that carry meaning. */
function limitBarFills(): string[] {
  const spend = readFileSync(join(process.cwd(), 'renderer/src/screens/spend/spend.css'), 'utf8');
  const rules = [...spend.matchAll(/([^{}]*\.limit-bar[^{}]*\bspan)\s*\{([^}]*)\}/g)];
  return rules.flatMap((rule) => [...rule[2]!.matchAll(/background:\s*var\(--([\w-]+)\)/g)].map((m) => m[1]!));
}
const SERIES = [...pairs.keys()].filter((name) => /^series-\d+$/.test(name));
const THEMES = [
  [0, 'light'],
  [1, 'dark'],
] as const;

describe('theme contrast (WCAG AA)', () => {
  it('reads the palette from styles.css', () => {
    expect(SERIES).toHaveLength(10);
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
  });

  for (const [theme, themeName] of THEMES) {
    it(`keeps text at 4.5:1 on every background in the ${themeName} theme`, () => {
      for (const text of ['text', 'muted', 'accent', 'danger', 'ok']) {
        for (const background of BACKGROUNDS) {
          expect(
            contrast(color(text, theme), color(background, theme)),
            `--${text} on --${background}`,
          ).toBeGreaterThanOrEqual(4.5);
        }
      }
      expect(contrast(color('accent-text', theme), color('accent', theme)), 'a primary button').toBeGreaterThanOrEqual(
        4.5,
      );
      expect(contrast(color('text', theme), color('warning-bg', theme)), 'a warning').toBeGreaterThanOrEqual(4.5);
    });

    it(`keeps the fills of the spend screen's limit bars at 3:1 in the ${themeName} theme`, () => {
      const fills = limitBarFills();
      expect(fills.length).toBeGreaterThanOrEqual(3);
      for (const fill of fills) {
        for (const background of BACKGROUNDS) {
          expect(
            contrast(color(fill, theme), color(background, theme)),
            `--${fill} on --${background}`,
          ).toBeGreaterThanOrEqual(3);
        }
      }
    });

    it(`keeps focus rings, control edges and every chart series at 3:1 in the ${themeName} theme`, () => {
      for (const graphic of ['focus', 'control-border', 'chart-warning', ...SERIES]) {
        for (const background of BACKGROUNDS) {
          expect(
            contrast(color(graphic, theme), color(background, theme)),
            `--${graphic} on --${background}`,
          ).toBeGreaterThanOrEqual(3);
        }
      }
    });
  }
});
