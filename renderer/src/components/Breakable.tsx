import { Fragment } from 'react';

/** Where a reader would break an identifier: before "@", after ".", "-", "_" or "/". */
const BREAKS = /(?=@)|(?<=[./_-])/;

/**
 * An identifier (an email, an id) that may wrap only at its natural joints, never mid-word: a
 * narrow column breaks "ada.lovelace@analytical.example" as "ada.lovelace" / "@analytical.example".
 */
export function Breakable({ text }: { text: string }) {
  return text.split(BREAKS).map((part, i) => (
    <Fragment key={i}>
      {i > 0 && <wbr />}
      {part}
    </Fragment>
  ));
}
