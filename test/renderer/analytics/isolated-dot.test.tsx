import { render } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { isolatedDot } from '../../../renderer/src/screens/analytics/isolated-dot.js';

const knownIn = (values: readonly (number | null)[]) => (i: number) => (values[i] ?? null) !== null;

function circlesDrawn(values: readonly (number | null)[]): number[] {
  const Dot = isolatedDot(values.length, knownIn(values), '#123456');
  if (Dot === false) return [];
  const drawn: number[] = [];
  values.forEach((_, index) => {
    const { container } = render(
      <svg>
        <Dot
          index={index}
          cx={10}
          cy={20}
          r={2}
          value={values[index] ?? undefined}
          payload={{}}
          points={[]}
          dataKey="v"
        />
      </svg>,
    );
    if (container.querySelector('circle')) drawn.push(index);
  });
  return drawn;
}

describe('isolatedDot', () => {
  it('draws no dots on a line whose known values all have a neighbour', () => {
    expect(isolatedDot(4, knownIn([1, 2, null, null]), '#000')).toBe(false);
    expect(isolatedDot(0, knownIn([]), '#000')).toBe(false);
  });

  it('marks exactly the values between two unknowns, the ends included', () => {
    expect(circlesDrawn([5, null, 3, null, 4, 6, null, 2])).toEqual([0, 2, 7]);
  });
});
