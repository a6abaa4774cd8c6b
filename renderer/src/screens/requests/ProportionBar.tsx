/**
 * Parts of a whole drawn to scale in one bar, for a picture whose figures are written beside
 * it: the bar is one image with its own description, each part a class (`picture-<id>`) for
 * its colour. A part of 0 is not drawn (not even as a sliver); an unknown part is not given to
 * this bar at all.
 */
export function ProportionBar({
  label,
  parts,
  testId,
}: {
  /** What the bar shows, in words, for those who cannot see it. */
  label: string;
  parts: readonly { id: string; value: number }[];
  testId: string;
}) {
  const total = parts.reduce((sum, part) => sum + Math.max(0, part.value), 0);
  return (
    <div className="picture-bar" role="img" aria-label={label} data-testid={testId}>
      {total > 0 &&
        parts
          .filter((part) => part.value > 0)
          .map((part) => (
            <span
              key={part.id}
              className={`picture-part picture-${part.id}`}
              style={{ width: `${(Math.max(0, part.value) / total) * 100}%` }}
              data-part={part.id}
            />
          ))}
    </div>
  );
}
